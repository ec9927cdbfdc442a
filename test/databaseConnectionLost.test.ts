import { createPrisma } from "@herald/db";
import { isDatabaseUnavailable } from "@herald/db/errors";
import { createPool, inTransaction, type Pool } from "@herald/db/pool";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL } from "./support/env.ts";
import { createTestDatabase } from "./support/isolation.ts";

/**
 * The moment that once ended the dispatcher: a connection lost while a transaction holds it
 * between two statements (a PostgreSQL restart, a switchover, a cut link). The pool no longer
 * listens to a client in use, and a pg client that loses its connection with no statement
 * running emits `error`; with no listener, Node ends the process. Made on purpose here by
 * terminating the transaction's backend, for the plain pool and for Prisma on it: the
 * transaction fails as the database being away, the process goes on (an `error` with no
 * listener would fail this file), and the pool's next statement runs on a new connection.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: Pool;
const admin = new pg.Client({ connectionString: PG_URL });

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 2);
  await admin.connect();
});

afterAll(async () => {
  await pool?.end();
  await admin.end();
  await db?.drop();
});

/** Ends a backend from outside, as a PostgreSQL shutdown does, and gives its client time to hear. */
async function terminate(pid: number): Promise<void> {
  await admin.query("SELECT pg_terminate_backend($1)", [pid]);
  await new Promise((r) => setTimeout(r, 300));
}

describe("a connection lost in the middle of a transaction", () => {
  it("fails that transaction as the database being away, not the process, on the plain pool", async () => {
    const failed = await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await terminate(rows[0]!.pid);
      await client.query("SELECT 1");
    }).catch((err: unknown) => err);
    expect(isDatabaseUnavailable(failed), String(failed)).toBe(true);
    const { rows } = await pool.query<{ one: number }>("SELECT 1 AS one");
    expect(rows).toEqual([{ one: 1 }]);
  });

  it("does the same for a Prisma transaction on that pool", async () => {
    const prisma = createPrisma(pool);
    const failed = await prisma
      .$transaction(async (tx) => {
        const rows = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        await terminate(rows[0]!.pid);
        await tx.$queryRaw`SELECT 1`;
      })
      .catch((err: unknown) => err);
    expect(isDatabaseUnavailable(failed), String(failed)).toBe(true);
    expect(await prisma.$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    // Prisma gives a connection back only when its ROLLBACK succeeds: the lost one is back anyway.
    await expect.poll(() => pool.totalCount - pool.idleCount).toBe(0);
    await prisma.$disconnect();
  });

  it("fails a statement on an idle connection the server closed, and the next one runs", async () => {
    const client = await pool.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    client.release();
    await terminate(rows[0]!.pid);
    // The pool dropped that idle client when it heard; a new one answers.
    const again = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    expect(again.rows[0]!.pid).not.toBe(rows[0]!.pid);
  });
});
