import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/**
 * Numbered SQL migrations (`migrations/0001_init.sql`, …), applied in order, each in its own
 * transaction, under an advisory lock so replicas starting together apply each once. A
 * migration that changed after it was applied stops the run: migrations never change.
 * They live in their own schema so Prisma's view of `public` is exactly the data model.
 */
export const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "migrations");
const LOCK_ID = 727_001;

export type Migration = { name: string; sql: string; checksum: string };

export async function readMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(join(dir, file), "utf8");
      return {
        name: file.replace(/\.sql$/, ""),
        sql,
        checksum: createHash("sha256").update(sql).digest("hex"),
      };
    }),
  );
}

/** Creates the database named in `databaseUrl` when it does not exist. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (err) {
    // Another process created it between our check and our CREATE.
    if ((err as { code?: string }).code === "42P04") return false;
    throw err;
  } finally {
    await client.end();
  }
}

/**
 * Applies pending migrations; returns the names applied. `through` stops after the migration of
 * that name: a database as an older release left it, for testing the migrations that follow.
 */
export async function migrate(
  databaseUrl: string,
  log: (line: string) => void = () => {},
  through?: string,
): Promise<string[]> {
  const all = await readMigrations();
  const last = through === undefined ? all.length : all.findIndex((m) => m.name === through) + 1;
  if (last === 0) throw new Error(`no migration named ${through}`);
  const migrations = all.slice(0, last);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_ID]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS herald_meta;
      CREATE TABLE IF NOT EXISTS herald_meta.migrations (
        name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Map(
      (
        await client.query<{ name: string; checksum: string }>(
          "SELECT name, checksum FROM herald_meta.migrations",
        )
      ).rows.map((r) => [r.name, r.checksum]),
    );
    for (const m of migrations) {
      const previous = done.get(m.name);
      if (previous !== undefined) {
        if (previous !== m.checksum) throw new Error(`migration ${m.name} changed after it was applied`);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO herald_meta.migrations (name, checksum) VALUES ($1, $2)", [
          m.name,
          m.checksum,
        ]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
      log(`applied migration ${m.name}`);
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_ID]).catch(() => {});
    await client.end();
  }
  return applied;
}
