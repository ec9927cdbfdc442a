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

/**
 * Worth retrying: the database away (below), a conflict with another writer, a prepared
 * statement a new connection fixes, or the server short of a resource for now (class 53: disk,
 * memory; 58: an I/O error), in the error or in what it wraps (a publish failed because the
 * payload could not be read, say).
 */
export function isTransientDbError(err: unknown): boolean {
  return someInChain(err, (e) => {
    const code = (e as { code?: unknown }).code;
    if (isStalePreparedStatement(e) || unavailable(e)) return true;
    return (
      typeof code === "string" &&
      (TRANSIENT_STATES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && TRANSIENT_CLASSES.has(code.slice(0, 2))))
    );
  });
}

const TRANSIENT_CLASSES = new Set(["53", "58"]);

/**
 * SQLSTATEs that say the server is away: the connection failed or was refused (class 08, but
 * not 08P01, a protocol violation: a bug), the server shutting down, starting or refusing
 * connections (57P01-57P03), or out of connections (53300).
 */
const UNAVAILABLE_STATES = new Set([
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);
/** What a socket to the database fails with when the other side is away or cannot be found. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Prisma's codes for the same (through the pg driver adapter): server unreachable, connect
 * timed out, connection closed, too many connections; and the adapter's kinds of error under
 * them. Not its timeouts waiting for a busy pool or a slow statement: load, not an outage.
 */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1017", "P2037"]);
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
  if (
    typeof code === "string" &&
    (SOCKET_CODES.has(code) || PRISMA_UNAVAILABLE.has(code) || UNAVAILABLE_STATES.has(code))
  )
    return true;
  if (typeof e?.kind === "string" && ADAPTER_UNAVAILABLE.has(e.kind)) return true;
  const message = typeof e?.message === "string" ? e.message : "";
  return CONNECTION_MESSAGES.some((re) => re.test(message));
}

/** Whether `test` holds for `err` or anything it wraps (`cause`, a Prisma error's adapter error). */
function someInChain(err: unknown, test: (e: object) => boolean): boolean {
  const seen = new Set<unknown>();
  const queue = [err];
  while (queue.length) {
    const e = queue.shift();
    if (e === null || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    if (test(e)) return true;
    const { cause, meta } = e as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
    queue.push(cause, meta?.driverAdapterError);
  }
  return false;
}

/**
 * Whether the database itself is away (down, restarting, unreachable, out of connections), as
 * opposed to refusing this statement: the error, or one it wraps. The gateway answers such a
 * failure `503` with a Retry-After, and each service logs it as an outage (OutageLog), not per
 * request or retry. Socket codes count only as the database's: an HTTP request's own socket
 * errors must not reach this (the gateway maps them before: http/body.ts).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return someInChain(err, unavailable);
}
