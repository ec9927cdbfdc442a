import pg from "pg";

/**
 * A plain pg pool for the hot paths (accepting events, fan-out, sending attempts, recording
 * results). The profile of a loaded system showed Prisma's query compiler and interpreter
 * taking most of the CPU there; these paths run a few fixed statements each, in batches,
 * where hand-written SQL costs a fraction. Everything else keeps the Prisma client.
 */
export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // An idle client that loses its connection emits here; the pool replaces it.
  pool.on("error", () => {});
  return pool;
}

/** Runs `fn` in a transaction on one pooled connection. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
