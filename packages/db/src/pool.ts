import pg from "pg";
import { isDatabaseUnavailable, isStalePreparedStatement } from "./errors.ts";

/**
 * The one pool of database connections a process has, DATABASE_POOL_SIZE of them: the plain
 * statements of the hot paths (accepting events, the delivery lifecycle) and, in the
 * api-gateway, the Prisma client (client.ts) share it. The profile of a loaded system showed
 * Prisma's query compiler and interpreter taking most of the CPU on the hot paths; those run
 * a few fixed statements each, in batches, where hand-written SQL costs a fraction.
 */
export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Where a statement can run: the pool, or one connection inside a transaction. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

/**
 * How long a connection is kept unused before the pool closes it. pg's default, 10 s, closed
 * the connections a burst had opened before the next came, and their prepared statements with
 * them: each new connection planned its hot statements again, tens of milliseconds each under
 * load on the partitioned log. Idle connections stay within the budget the deployment sizes for
 * anyway (DATABASE_POOL_SIZE per process, every connection open).
 */
export const POOL_IDLE_MS = 10 * 60_000;

/**
 * How long a new connection may take to open before the statement waiting for it fails as the
 * database being unavailable: pg's default waits for ever, and an address that drops packets
 * (a network cut, a node gone) would hold every request and handler that needs one. Set on each
 * connection, not on the pool: pg-pool's own timeout would also end a wait for a busy pool's
 * next free connection, which under load is no outage.
 */
export const CONNECT_TIMEOUT_MS = 5_000;

/** The connections a pool opens: each gives up opening after CONNECT_TIMEOUT_MS. */
class TimedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super({
      ...(typeof config === "string" ? { connectionString: config } : config),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
  }
}

/** Where a pool reports that the database answers again (OutageLog). */
export type PoolOutage = { ok(): void; watch(probe: () => Promise<unknown>): void };

export function createPool(databaseUrl: string, max = 10, outage?: PoolOutage): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    idleTimeoutMillis: POOL_IDLE_MS,
    Client: TimedClient,
    // An idle connection whose peer vanished without closing (a cut link, a node gone) is found
    // by TCP keepalive within a minute or so, not after the system's two hours. One with a
    // statement under way waits for TCP's retransmissions to give up.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client that loses its connection emits here; the pool replaces it.
  pool.on("error", () => {});
  outage?.watch(() => pool.query("SELECT 1"));
  pool.on("connect", (client) => {
    // A client in use (a transaction between two statements, a Prisma transaction) that loses
    // its connection emits `error` too, where the pool no longer listens: with no listener,
    // Node would end the process. Its next statement fails instead, and the pool drops it.
    client.on("error", () => {});
    // A connection opened: the database answers, and an outage, if one was logged, is over.
    outage?.ok();
  });
  return pool;
}

/**
 * A statement of a hot path, prepared once per connection under `name` and run from its plan
 * thereafter. PostgreSQL otherwise plans each run anew, and the lifecycle's large CTEs take about
 * a millisecond to plan (measured idle: the release gate's 1.3 ms a run unnamed, 0.37 ms named).
 * Only for statements whose result columns are listed, not a table's `*`: a migration that adds
 * a column must not change a prepared statement's result type. Names are unique per text.
 */
export function prepared(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  return (values) => ({ name, text, values });
}

/**
 * A condition, always true, that makes the transaction of the statement it is in commit
 * without waiting for the WAL's flush to disk (`synchronous_commit` off, for that transaction
 * only): for writes a crash may forget because what follows from them is repeated anyway (a
 * result: its attempt is sent again; an outbox row's delete: its message is published again).
 * The commit comes sooner, and the row locks taken are let go sooner; a crash of PostgreSQL
 * (not a clean stop) can forget the last few hundred milliseconds of such commits (3 ×
 * wal_writer_delay). In a statement run on its own it sets its implicit transaction's commit.
 * A scalar subquery, run once (an InitPlan); not EXISTS, whose select list is never evaluated.
 */
export const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL";

/** Runs `fn` in a transaction on one pooled connection. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let drop: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    // Its prepared statements no longer fit the database, or its connection is lost: the pool
    // opens a fresh connection.
    if (isStalePreparedStatement(err) || isDatabaseUnavailable(err)) drop = err as Error;
    throw err;
  } finally {
    client.release(drop);
  }
}
