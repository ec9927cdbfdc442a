import { ASYNC_COMMIT, prepared, type Queryable } from "../pool.ts";
import type { Statements } from "./rows.ts";

/**
 * The gateway's stream of rows whose message the broker confirmed, a batch a statement.
 * Committed without waiting for the WAL's flush (ASYNC_COMMIT): a delete a crash forgets only
 * has its message published again by the relay, which consumers dedupe.
 */
const DELETE_CONFIRMED = prepared(
  "outbox-delete-confirmed",
  `DELETE FROM outbox WHERE id = ANY($1::bigint[]) AND ${ASYNC_COMMIT}`,
);

export async function deleteConfirmed(db: Queryable, ids: bigint[]): Promise<void> {
  await db.query(DELETE_CONFIRMED([ids.map(String)]));
}

/**
 * Rows published: inside the relay's transaction, or the few rows of operational notices the
 * dispatcher published after their transaction.
 */
export async function deleteRows(db: Queryable | Statements, ids: (bigint | string)[]): Promise<void> {
  await (db as Statements).query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [ids.map(String)]);
}
