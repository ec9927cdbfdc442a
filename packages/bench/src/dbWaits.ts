import pg from "pg";

/**
 * What the database's sessions are doing while a scenario runs: `pg_stat_activity` of the bench
 * database sampled every few milliseconds, each active statement counted with what it waits on
 * (`CPU` when nothing: running, or waiting for a core). The shares say which statements hold
 * a delivery up, and whether on a row lock, the WAL's flush or the processor.
 */
export type DbWait = { statement: string; wait: string; share: number };
export type DbWaits = { samples: number; busiest: DbWait[] };

const SAMPLE_EVERY_MS = 5;

/** The hot statements by how their text starts; anything else by its first words. */
const KNOWN: [RegExp, string][] = [
  [
    /^WITH x AS \( SELECT \* FROM unnest\(\$1::text\[\], \$2::text\[\], \$3::text\[\], \$4::text\[\], \$5::text\[\], \$6::text\[\], \$7::timestamptz/,
    "accept events (gateway)",
  ],
  [/^WITH x AS \( SELECT \* FROM unnest/, "create deliveries (fan-out)"],
  [/^WITH f AS MATERIALIZED/, "release gate (fan-out)"],
  [/^WITH ev AS MATERIALIZED/, "fan-out: events and endpoints"],
  [/^SELECT ev\.id, ev\.account_id/, "fan-out: events"],
  [/^SELECT id, app_id, url/, "fan-out: endpoints"],
  [/^WITH r AS \(/, "record successes (results)"],
  [/^WITH old AS MATERIALIZED/, "flows answered (results)"],
  [/^DELETE FROM outbox/, "outbox delete (gateway)"],
];

export function statementName(query: string): string {
  const text = query.replace(/\s+/g, " ").trim();
  return KNOWN.find(([re]) => re.test(text))?.[1] ?? text.slice(0, 40);
}

/** Samples until `stop` is called; needs a connection to the database, not a pool's. */
export async function sampleDbWaits(databaseUrl: string): Promise<{ stop: () => Promise<DbWaits> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ query: string; wait: string | null }>(
        `SELECT query, wait_event_type || ':' || wait_event AS wait FROM pg_stat_activity
         WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [name],
      );
      samples++;
      for (const r of rows) {
        const key = `${statementName(r.query)}\u0000${r.wait ?? "CPU"}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      const busiest = [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([key, n]) => {
          const [statement, wait] = key.split("\u0000") as [string, string];
          return { statement, wait, share: n / Math.max(1, samples) };
        });
      return { samples, busiest };
    },
  };
}

export function dbWaitLines(w: DbWaits): string[] {
  const width = Math.max(...w.busiest.map((b) => b.statement.length), 10);
  return [
    `\nWhat the database did at the first rate (${w.samples} samples of pg_stat_activity; share of samples a statement was active, by what it waited on)`,
    ...w.busiest.map(
      (b) =>
        `  ${b.statement.padEnd(width)}  ${b.wait.padEnd(22)}  ${(100 * b.share).toFixed(0).padStart(3)} %`,
    ),
  ];
}
