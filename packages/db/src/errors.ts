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
const TRANSIENT_STATES = new Set(["40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03"]);
const TRANSIENT_CLASSES = new Set(["08", "53", "58"]);

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
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code))
    return TRANSIENT_STATES.has(code) || TRANSIENT_CLASSES.has(code.slice(0, 2));
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, …
  const message = err instanceof Error ? err.message : "";
  return CONNECTION_MESSAGES.some((re) => re.test(message));
}
