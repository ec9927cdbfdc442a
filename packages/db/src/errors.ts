/**
 * Which database errors are worth the same work again, later. A consumer retries these in
 * place and dead-letters a message that keeps failing with anything else (a value PostgreSQL
 * refuses, a constraint the message can never meet, a bug), so the classification errs on the
 * side of "transient" only where the database itself is the cause.
 *
 * SQLSTATE classes (PostgreSQL, Appendix A): 08 connection exception, 53 insufficient
 * resources, 57P01-57P03 shutdown or not accepting connections, 58 system error; and the
 * conflicts a concurrent writer causes: 40001 serialization failure, 40P01 deadlock, 55P03
 * lock not available, 57014 statement cancelled.
 */
const TRANSIENT_STATES = new Set(["40001", "40P01", "55P03", "57014"]);

/** node-postgres and pg-pool errors that carry no SQLSTATE: the connection itself failed. */
const CONNECTION_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Client was closed and is not queryable/i,
];

/**
 * A connection's prepared statement that no longer fits the database: a migration changed a
 * result column's type under it (0A000 "cached plan must not change result type"), or a pooler
 * in between lost or shares statement names (26000, 42P05). Another connection prepares it
 * anew, so the connection is dropped (`inTransaction`; the pool's own `query` drops a client on
 * any error) and the work is worth doing again.
 */
export function isStalePreparedStatement(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === "26000" || e?.code === "42P05") return true;
  return e?.code === "0A000" && /cached plan must not change result type/.test(String(e.message));
}

export function isTransientDbError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (isStalePreparedStatement(err)) return true;
  if (typeof code === "string" && TRANSIENT_STATES.has(code)) return true;
  return unavailable(err);
}

/** SQLSTATEs that say the server is shutting down, starting, or out of connections. */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03"]);
const UNAVAILABLE_CLASSES = new Set(["08", "53", "58"]);

/**
 * Prisma's codes for the same (through the pg driver adapter): server unreachable, connect
 * timed out, operation timed out, connection closed, no pooled connection in time, too many
 * connections; and the adapter's kinds of error under them.
 */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);
const ADAPTER_UNAVAILABLE = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);

/** One error's own fields, without what it wraps. */
function unavailable(err: unknown): boolean {
  const e = err as { code?: unknown; kind?: unknown; message?: unknown } | null;
  const code = e?.code;
  if (typeof code === "string") {
    if (PRISMA_UNAVAILABLE.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code))
      return UNAVAILABLE_STATES.has(code) || UNAVAILABLE_CLASSES.has(code.slice(0, 2));
    if (/^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT, …
  }
  if (typeof e?.kind === "string" && ADAPTER_UNAVAILABLE.has(e.kind)) return true;
  const message = typeof e?.message === "string" ? e.message : "";
  return CONNECTION_MESSAGES.some((re) => re.test(message));
}

/**
 * Whether the database itself is away (down, restarting, unreachable, out of connections), as
 * opposed to refusing this statement: the error, or one it wraps (a Prisma error's adapter
 * error and its cause, an error's `cause`). The gateway answers such a failure `503` with a
 * Retry-After, and each service logs it as an outage (OutageLog), not per request or retry.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue = [err];
  while (queue.length) {
    const e = queue.shift();
    if (e === null || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    if (unavailable(e)) return true;
    const { cause, meta } = e as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
    queue.push(cause, meta?.driverAdapterError);
  }
  return false;
}
