import { newId } from "../ids.ts";
import { inTransaction, type Pool, type Queryable } from "../pool.ts";
import { lockDeliveries } from "./locks.ts";

/** Which of an endpoint's `failed` deliveries a replay takes (replay.requested.v1). */
export type ReplaySpec = {
  replayId: string;
  endpointId: string;
  /** Only those whose last failure was at or after this. */
  since: Date | null;
  /** Only those whose last failure was at or before this: when the replay was asked for. */
  cutoff: Date;
  /** Only this event's. */
  eventId: string | null;
};

/** Marks the replay `running`; false when there is nothing to do (unknown, or completed). */
export async function startReplay(db: Queryable, replayId: string): Promise<boolean> {
  const { rows } = await db.query<{ status: string }>(
    `UPDATE replays SET status = CASE WHEN status = 'queued' THEN 'running' ELSE status END
     WHERE id = $1 RETURNING status`,
    [replayId],
  );
  return rows[0] !== undefined && rows[0].status !== "completed";
}

/**
 * The next `limit` matching deliveries, oldest event first, go back to `pending`, each with a
 * new attempt (the next number) tagged with the replay; returns the new attempts' ids, and
 * whether more may match (the batch was full). One
 * transaction under the locking rule; a delivery another run took meanwhile is no longer
 * `failed` once its lock is ours, and is left alone: no delivery is replayed twice.
 */
export async function replayBatch(
  pool: Pool,
  spec: ReplaySpec,
  limit: number,
): Promise<{ attemptIds: string[]; more: boolean }> {
  return inTransaction(pool, async (tx) => {
    const { rows: candidates } = await tx.query<{ id: string }>(
      // Nothing more once the endpoint is deleted or disabled mid-way (or its app deleted).
      `SELECT d.id FROM deliveries d JOIN endpoints ep ON ep.id = d.endpoint_id
       WHERE d.endpoint_id = $1 AND d.status = 'failed' AND ep.deleted_at IS NULL AND NOT ep.disabled
         AND COALESCE(d.last_attempt_at, d.updated_at) <= $2
         AND ($3::timestamptz IS NULL OR COALESCE(d.last_attempt_at, d.updated_at) >= $3::timestamptz)
         AND ($4::text IS NULL OR d.event_id = $4::text)
       ORDER BY d.event_id, d.id LIMIT $5`,
      [spec.endpointId, spec.cutoff, spec.since, spec.eventId, limit],
    );
    const locked = await lockDeliveries(
      tx,
      candidates.map((c) => c.id),
    );
    const ids = candidates.map((c) => c.id).filter((id) => locked.get(id)?.status === "failed");
    const more = candidates.length === limit;
    if (!ids.length) return { attemptIds: [], more };
    const attemptIds = ids.map(() => newId("attempt"));
    await tx.query(
      `WITH d AS (
         UPDATE deliveries SET status = 'pending', next_attempt_at = NULL, updated_at = now()
         WHERE id = ANY($1) RETURNING id, account_id, app_id, event_id, endpoint_id)
       INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, replay_id, created_at)
       SELECT n.attempt_id, d.account_id, d.app_id, d.id, d.event_id, d.endpoint_id,
              (SELECT COALESCE(MAX(a.attempt_number), 0) + 1 FROM attempts a WHERE a.delivery_id = d.id),
              'pending', ep.url, now(), $3, now()
       FROM unnest($1::text[], $2::text[]) AS n(delivery_id, attempt_id)
       JOIN d ON d.id = n.delivery_id JOIN endpoints ep ON ep.id = d.endpoint_id`,
      [ids, attemptIds, spec.replayId],
    );
    return { attemptIds, more };
  });
}

export async function completeReplay(db: Queryable, replayId: string): Promise<void> {
  await db.query("UPDATE replays SET status = 'completed', completed_at = now() WHERE id = $1", [replayId]);
}
