import { randomBytes } from "node:crypto";
import { logBytes } from "@herald/db/lifecycle";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// A retention of 2 s over partitions of 1 s, looked at four times a second: within a few
// seconds the log holds only the last few seconds of events, whatever keeps flowing in.
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
let db: pg.Pool;

beforeAll(async () => {
  sys = await startSystem({ RETENTION: "2s", PARTITION_INTERVAL: "1s", MAINTENANCE_INTERVAL: "250ms" });
  receiver = await startReceiver();
  receiver.on("/ok", { status: 200 });
  await setupApp(sys, ["order.paid"]);
  f = fixtures(sys, receiver);
  db = new pg.Pool({ connectionString: sys.databaseUrl, max: 2 });
});
afterAll(async () => {
  await db.end();
  await sys.close();
  await receiver.close();
});

/**
 * Bytes of the delivery log (every partition of its three tables) and of the whole database;
 * and, to tell why when the log grows, its ranges and its deliveries still open (which hold theirs).
 */
async function sizes(): Promise<{ log: number; database: number; ranges: number; open: number }> {
  const { rows } = await db.query<{ database: string; ranges: number; open: number }>(
    `SELECT pg_database_size(current_database()) AS database,
       (SELECT count(*)::int FROM pg_inherits WHERE inhparent = 'events'::regclass) AS ranges,
       (SELECT count(*)::int FROM deliveries WHERE status IN ('pending', 'retrying')) AS open`,
  );
  const { database, ranges, open } = rows[0]!;
  return { log: await logBytes(db), database: Number(database), ranges, open };
}

/** Each event's payload, incompressible: 12 KiB of base64. */
const PAYLOAD = 12_288;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("a database under retention", () => {
  it("stops growing once retention kicks in, while events keep flowing", async () => {
    const endpoint = await f.endpoint("/ok");
    const started = Date.now();
    const at = () => Date.now() - started;
    let sent = 0;
    let last = "";
    let flowing = true;
    // About 50 events a second, for 16 s, as fast as they are delivered: a batch goes once those
    // before the last one have arrived. A range with a delivery still open is kept by design, so
    // a backlog that a loaded machine builds up would be measured as growth retention left.
    const delivered = () => receiver.received("/ok").length;
    const load = (async () => {
      while (flowing) {
        while (flowing && delivered() < sent - 5) await new Promise((r) => setTimeout(r, 20));
        const ids = await Promise.all(
          Array.from({ length: 5 }, () =>
            f.send("order.paid", { blob: randomBytes(PAYLOAD * 0.75).toString("base64") }),
          ),
        );
        sent += ids.length;
        last = ids.at(-1)!;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // This machine's PostgreSQL may run without autovacuum: dead rows (the outbox's, the flows',
    // the catalog's for each partition made and dropped) are cleared as it would, so that what is
    // measured is what retention leaves.
    const samples: ({ t: number; sent: number } & Awaited<ReturnType<typeof sizes>>)[] = [];
    while (at() < 16_000) {
      await new Promise((r) => setTimeout(r, 500));
      await db.query("VACUUM");
      samples.push({ t: at(), sent, ...(await sizes()) });
    }
    flowing = false;
    await load;

    // From 6 s on the log holds 2 s of retention, a partition being filled, and those ahead.
    const first = samples.filter((s) => s.t >= 6_000 && s.t < 10_000);
    const second = samples.filter((s) => s.t >= 12_000);
    const sentBetween = second.at(-1)!.sent - first[0]!.sent;
    expect(sentBetween, "events kept flowing").toBeGreaterThan(first[0]!.sent / 2);
    // Without retention the log would grow by at least the payloads sent from one window to the
    // next; with it, by what stays: a quarter of that is far more than the sawtooth of the drops.
    const added = mean(second.map((s) => s.sent)) - mean(first.map((s) => s.sent));
    const growth = (k: "log" | "database") => mean(second.map((s) => s[k])) - mean(first.map((s) => s[k]));
    const detail = JSON.stringify({ added, log: growth("log"), database: growth("database"), samples });
    expect(growth("log"), detail).toBeLessThan(0.25 * added * PAYLOAD);
    expect(growth("database"), detail).toBeLessThan(0.25 * added * PAYLOAD);
    // And delivery went on to the end.
    await expect.poll(() => f.status(last, endpoint), { timeout: 10_000 }).toBe("succeeded");
  }, 60_000);
});
