import pg from "pg";
import { readMigrations } from "./migrate.ts";

/**
 * Read-only questions about the migrations this build ships: which are not applied yet, and
 * which were applied with other contents. Used where a process must not start before the
 * database is ready for it (the `--wait` mode of the migrate CLI, run as an init container
 * next to each service that has a database), without ever changing the database.
 */
export type MigrationStatus = {
  /** Shipped here, not applied yet. */
  pending: string[];
  /** Applied, but with contents other than the ones shipped here: a run would stop on them. */
  changed: string[];
};

export async function migrationStatus(databaseUrl: string): Promise<MigrationStatus> {
  const migrations = await readMigrations();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const table = await client.query<{ found: string | null }>(
      "SELECT to_regclass('herald_meta.migrations')::text AS found",
    );
    const applied = new Map<string, string>();
    if (table.rows[0]?.found) {
      const rows = await client.query<{ name: string; checksum: string }>(
        "SELECT name, checksum FROM herald_meta.migrations",
      );
      for (const row of rows.rows) applied.set(row.name, row.checksum);
    }
    // Migrations applied that this build does not know (a newer build ran first) are fine:
    // migrations only add, so an older build still finds what it needs.
    return {
      pending: migrations.filter((m) => !applied.has(m.name)).map((m) => m.name),
      changed: migrations
        .filter((m) => applied.has(m.name) && applied.get(m.name) !== m.checksum)
        .map((m) => m.name),
    };
  } finally {
    await client.end();
  }
}

export class MigrationsChangedError extends Error {
  constructor(readonly names: string[]) {
    super(`migration(s) ${names.join(", ")} changed after they were applied`);
  }
}

/**
 * Resolves once every migration shipped here is applied, polling every `intervalMs`. An
 * unreachable database (not started yet, or not created yet by the migration job) counts as
 * not ready. Rejects after `timeoutMs`, or at once when an applied migration has changed.
 */
export async function waitForMigrations(
  databaseUrl: string,
  {
    timeoutMs,
    intervalMs = 2000,
    log = () => {},
  }: { timeoutMs: number; intervalMs?: number; log?: (line: string) => void },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    let now: string;
    try {
      const status = await migrationStatus(databaseUrl);
      if (status.changed.length) throw new MigrationsChangedError(status.changed);
      if (!status.pending.length) return;
      now = `waiting for migration(s) ${status.pending.join(", ")}`;
    } catch (err) {
      if (err instanceof MigrationsChangedError) throw err;
      now = `waiting for the database: ${(err as Error).message}`;
    }
    // One line per change of state, not one per poll.
    if (now !== last) log(now);
    last = now;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out ${now}`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
  }
}
