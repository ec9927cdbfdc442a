import { isOpen } from "@herald/contracts/statuses";
import { inTransaction, type Pool } from "../pool.ts";
import { lockDeliveries } from "./locks.ts";

/** 500 deliveries a transaction: an endpoint with a large backlog does not hold locks for long. */
const BATCH = 500;

/** Whose open deliveries to drop: a deleted endpoint's, or an erased event's. */
export type DropScope = { endpointId: string } | { eventId: string };

/**
 * After an endpoint's deletion or an event's erasure: its `pending` and `retrying` deliveries
 * become `dropped`, and their attempts not yet handed to a sender are removed; completed
 * attempts stay readable, and one in flight has its result recorded (a success still makes the
 * delivery `succeeded`; a failure leaves it `dropped`). In transactions of 500 under the locking rule. Returns how many were dropped.
 *
 * Idempotent: a second run finds nothing left open.
 */
export async function dropDeliveries(pool: Pool, scope: DropScope): Promise<number> {
  const [column, value] =
    "endpointId" in scope ? ["endpoint_id", scope.endpointId] : ["event_id", scope.eventId];
  let dropped = 0;
  for (let more = true; more; ) {
    const batch = await inTransaction(pool, async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `SELECT id FROM deliveries WHERE ${column} = $1 AND status IN ('pending', 'retrying')
         ORDER BY id LIMIT $2`,
        [value, BATCH],
      );
      const locked = await lockDeliveries(
        tx,
        rows.map((r) => r.id),
      );
      const open = [...locked.values()].filter((d) => isOpen(d.status));
      const ids = open.map((d) => d.id);
      await tx.query(
        `WITH gone AS (DELETE FROM attempts WHERE delivery_id = ANY($1) AND status = 'pending' AND sent_at IS NULL)
         UPDATE deliveries SET status = 'dropped', next_attempt_at = NULL, updated_at = now() WHERE id = ANY($1)`,
        [ids],
      );
      return { dropped: ids.length, more: rows.length === BATCH };
    });
    dropped += batch.dropped;
    more = batch.more;
  }
  return dropped;
}
