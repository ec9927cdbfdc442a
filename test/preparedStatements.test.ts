import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { isTransientDbError } from "@herald/db/errors";
import { createPool, inTransaction, POOL_IDLE_MS, prepared } from "@herald/db/pool";
import type pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase } from "./support/isolation.ts";

/**
 * Named prepared statements (`prepared` in packages/db/src/pool.ts): a name is one text on every
 * connection, or pg refuses the second, and a prepared statement's result must not be a table's
 * `*` (a migration adding a column would change a cached statement's result type).
 */
const root = join(import.meta.dirname, "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "dist" || name === "generated") return [];
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

const statements = [join(root, "packages"), join(root, "services")].flatMap(sources).flatMap((file) => {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/prepared\(\s*"([^"]+)",\s*(?:\/\/[^\n]*\n\s*)*(`[^`]*`|"[^"]*")/g)].map((m) => ({
    file: relative(root, file),
    name: m[1]!,
    sql: m[2]!,
  }));
});

describe("prepared statements", () => {
  it("are found in the sources", () => {
    expect(statements.map((s) => s.name)).toContain("release-fast");
    expect(statements.length).toBeGreaterThanOrEqual(8);
  });

  it("each have a name of their own", () => {
    const names = statements.map((s) => s.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it("list their result columns rather than select a table's *", () => {
    for (const s of statements) {
      // The last SELECT or RETURNING of the statement is its result.
      const tail = s.sql.slice(Math.max(s.sql.lastIndexOf("SELECT"), s.sql.lastIndexOf("RETURNING")));
      expect(tail, `${s.name} in ${s.file}`).not.toMatch(
        /SELECT\s+(\w+\.)?\*\s+FROM\s+(events|attempts|deliveries|endpoints|endpoint_flows|outbox)\b|RETURNING\s+(\w+\.)?\*/,
      );
    }
  });
});

describe("a prepared statement whose result type a migration changed", () => {
  const dropped: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of dropped) await drop();
  });

  it("fails as worth retrying, once per connection, and runs again on a fresh connection", async () => {
    const db = await createTestDatabase();
    dropped.push(db.drop);
    const pool = createPool(db.url, 1);
    try {
      const runs = {
        "the pool's query": (q: pg.QueryConfig) => pool.query(q),
        "a transaction": (q: pg.QueryConfig) => inTransaction(pool, (tx) => tx.query(q)),
      };
      for (const [way, run] of Object.entries(runs)) {
        const table = `widths_${Object.keys(runs).indexOf(way)}`;
        await pool.query(`CREATE TABLE ${table} (n int NOT NULL); INSERT INTO ${table} VALUES (1)`);
        const read = prepared(`read-${table}`, `SELECT n FROM ${table}`);
        expect((await run(read([]))).rows, way).toEqual([{ n: 1 }]);
        // A migration widens the column while the connection holds the statement.
        const migration = createPool(db.url, 1);
        await migration.query(`ALTER TABLE ${table} ALTER COLUMN n TYPE bigint`);
        await migration.end();
        const err = await run(read([])).catch((e: unknown) => e);
        expect((err as { code?: string }).code, way).toBe("0A000");
        expect(isTransientDbError(err), `${way}: a consumer retries it rather than dead-lettering`).toBe(
          true,
        );
        // The pool dropped that connection: the next run prepares the statement anew.
        expect((await run(read([]))).rows, way).toEqual([{ n: "1" }]);
      }
    } finally {
      await pool.end();
    }
  });
});

describe("a pooled connection idle between bursts", () => {
  it("keeps its prepared statements for minutes, not pg's 10 s, and is closed after POOL_IDLE_MS", async () => {
    const db = await createTestDatabase();
    const pool = createPool(db.url, 2);
    const probe = prepared("idle-probe", "SELECT pg_backend_pid() AS pid");
    const run = async () => {
      const { rows } = await pool.query<{ pid: number }>(probe([]));
      const { rows: kept } = await pool.query<{ name: string }>("SELECT name FROM pg_prepared_statements");
      return { pid: rows[0]!.pid, kept: kept.map((r) => r.name) };
    };
    // Only the pool's idle timers are faked: the connection's own I/O goes on as it would.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const first = await run();
      expect(pool.idleCount).toBe(1);
      vi.advanceTimersByTime(60_000);
      expect(pool.idleCount).toBe(1);
      expect(await run()).toEqual({ pid: first.pid, kept: ["idle-probe"] });
      vi.advanceTimersByTime(POOL_IDLE_MS + 1);
      expect(pool.totalCount).toBe(0);
    } finally {
      vi.useRealTimers();
      await pool.end();
      await db.drop();
    }
  });
});
