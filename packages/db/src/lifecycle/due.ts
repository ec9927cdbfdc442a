import { type DeliveryStatus, isOpen } from "@herald/contracts/statuses";
import { inTransaction, type Pool } from "../pool.ts";
import { lockDeliveries } from "./locks.ts";

type DueRow = {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  endpoint_deleted: boolean;
  endpoint_disabled: boolean;
  event_erased: boolean;
};

/**
 * Attempts that came due (a retry whose wait ran out, one the sweeper found stranded, or one
 * the release gate found waiting for an endpoint deleted or disabled since) are
 * checked before anything is sent: when the delivery ended meanwhile, its endpoint was
 * deleted or disabled, or its event's payload erased, the attempt is removed instead, and an
 * open delivery takes the status that says why: `dropped` (endpoint deleted, payload erased)
 * or `failed` (disabled: a replay can retry it).
 * Returns the attempts to send, and the deliveries ended here by status.
 *
 * Idempotent: only `pending` attempts are considered, and only open deliveries change.
 */
export async function checkDue(
  pool: Pool,
  attemptIds: string[],
): Promise<{ sendable: string[]; endpoints: string[]; ended: Partial<Record<DeliveryStatus, number>> }> {
  const { rows } = await pool.query<DueRow>(
    `SELECT a.id, a.delivery_id, a.endpoint_id, d.status, ep.deleted_at IS NOT NULL AS endpoint_deleted,
            ep.disabled AS endpoint_disabled, ev.data_erased_at IS NOT NULL AS event_erased
     FROM attempts a JOIN deliveries d ON d.id = a.delivery_id AND d.event_id = a.event_id JOIN endpoints ep ON ep.id = a.endpoint_id
       JOIN events ev ON ev.id = a.event_id
     WHERE a.id = ANY($1) AND a.status = 'pending'`,
    [attemptIds],
  );

  const sendable = rows.filter(
    (r) => isOpen(r.status) && !r.endpoint_deleted && !r.endpoint_disabled && !r.event_erased,
  );
  const stale = rows.filter((r) => !sendable.includes(r));
  const ended: Partial<Record<DeliveryStatus, number>> = {};
  if (stale.length) {
    await inTransaction(pool, async (tx) => {
      const locked = await lockDeliveries(
        tx,
        stale.map((r) => r.delivery_id),
      );
      const endings = stale
        .filter((r) => isOpen(locked.get(r.delivery_id)?.status ?? "dropped"))
        .map(
          (r) =>
            ({
              id: r.delivery_id,
              status: r.endpoint_deleted || r.event_erased ? "dropped" : "failed",
            }) as const,
        );
      await tx.query(
        `WITH gone AS (DELETE FROM attempts WHERE id = ANY($1) AND status = 'pending')
         UPDATE deliveries d SET status = e.status, next_attempt_at = NULL, updated_at = now()
         FROM unnest($2::text[], $3::text[]) AS e(id, status) WHERE d.id = e.id`,
        [stale.map((r) => r.id), endings.map((e) => e.id), endings.map((e) => e.status)],
      );
      for (const e of endings) ended[e.status] = (ended[e.status] ?? 0) + 1;
    });
  }
  return {
    sendable: sendable.map((r) => r.id),
    endpoints: [...new Set(sendable.map((r) => r.endpoint_id))],
    ended,
  };
}
