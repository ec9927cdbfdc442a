import { newId } from "../ids.ts";
import type { StagedMessage } from "../outbox/index.ts";
import { inTransaction, type Pool, type Queryable } from "../pool.ts";
import { lockDeliveries } from "./locks.ts";
import { stageNotices } from "./operational.ts";

/**
 * Which of an endpoint's `failed` deliveries a replay takes (replay.requested.v1): never those
 * of an event whose payload was erased.
 */
export type ReplaySpec = {
  replayId: string;
  endpointId: string;
  /** Only those whose last failure was at or after this. */
  since: Date | null;
  /** Only those whose last failure was at or before this: when the replay was asked for. */
  cutoff: Date;
  /** Only this event's. */
  eventId: string | null;
  /** Take the deliveries the replay claimed when it was asked for (claimReplay), and only those. */
  claimed: boolean;
};

// The deliveries a replay takes: $1 endpoint, $2 cutoff, $3 since, $4 event. When a delivery
// failed: its last attempt, or (failed without one, its endpoint disabled) when it took the status.
const MATCHING = `FROM deliveries
       WHERE endpoint_id = $1 AND status = 'failed' AND replay_id IS NULL
         AND COALESCE(last_attempt_at, updated_at) <= $2
         AND ($3::timestamptz IS NULL OR COALESCE(last_attempt_at, updated_at) >= $3::timestamptz)
         AND ($4::text IS NULL OR event_id = $4::text)
         AND NOT EXISTS (SELECT 1 FROM events ev WHERE ev.id = event_id AND ev.data_erased_at IS NOT NULL)`;

/**
 * Claims for `replayId` the endpoint's `failed` deliveries it matches and no unfinished replay
 * claimed, in id order (the locking rule), and returns how many: the replay's exact `queued`.
 * Run (`execute`: a statement's row count) in the transaction that creates the replay: one
 * asked for at the same moment waits on these rows, then finds them claimed.
 */
export async function claimReplay(
  execute: (text: string, values: unknown[]) => Promise<number>,
  spec: Omit<ReplaySpec, "claimed">,
): Promise<number> {
  return execute(
    `WITH matching AS (SELECT id ${MATCHING} ORDER BY id FOR UPDATE)
     UPDATE deliveries d SET replay_id = $5 FROM matching m WHERE d.id = m.id`,
    [spec.endpointId, spec.cutoff, spec.since, spec.eventId, spec.replayId],
  );
}

export type ReplayCandidate = { event_id: string; event_type: string; attempts: number; failed_at: Date };

/** A preview counts this many at most: past it, `count` is this and `capped` is true. */
export const PREVIEW_COUNT_MAX = 10_000;

/**
 * What a replay asked for now would take, without claiming anything: how many (up to
 * PREVIEW_COUNT_MAX, so an endpoint failing for weeks costs no more than that), and the first
 * `limit` of them, oldest event first (the order a replay takes them in). One statement, one snapshot: the count and the list agree. A
 * replay asked for later may take fewer, should another replay or a retry take some meanwhile.
 */
export async function previewReplay(
  query: <T>(text: string, values: unknown[]) => Promise<T[]>,
  spec: Omit<ReplaySpec, "claimed" | "replayId">,
  limit: number,
): Promise<{ count: number; capped: boolean; deliveries: ReplayCandidate[] }> {
  const rows = await query<ReplayCandidate & { total: number }>(
    `WITH m AS (SELECT id, event_id, attempts, COALESCE(last_attempt_at, updated_at) AS failed_at
                ${MATCHING} ORDER BY id LIMIT $5),
          total AS (SELECT count(*)::int AS n FROM m)
     SELECT total.n AS total, d.event_id, ev.type AS event_type, d.attempts, d.failed_at
     FROM total
     LEFT JOIN LATERAL (SELECT * FROM m ORDER BY event_id, id LIMIT $6) d ON true
     LEFT JOIN events ev ON ev.id = d.event_id
     ORDER BY d.event_id, d.id`,
    [spec.endpointId, spec.cutoff, spec.since, spec.eventId, PREVIEW_COUNT_MAX + 1, limit],
  );
  const total = rows[0]?.total ?? 0;
  return {
    count: Math.min(total, PREVIEW_COUNT_MAX),
    capped: total > PREVIEW_COUNT_MAX,
    deliveries: rows.filter((r) => r.event_id !== null).map(({ total: _, ...d }) => d),
  };
}

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
    // Claimed: those. Asked for before claims: what matches, as it was counted then.
    const matching = spec.claimed
      ? { where: "d.replay_id = $2", values: [spec.replayId] }
      : {
          where: `COALESCE(d.last_attempt_at, d.updated_at) <= $2
             AND ($3::timestamptz IS NULL OR COALESCE(d.last_attempt_at, d.updated_at) >= $3::timestamptz)
             AND ($4::text IS NULL OR d.event_id = $4::text)`,
          values: [spec.cutoff, spec.since, spec.eventId],
        };
    const { rows: candidates } = await tx.query<{ id: string }>(
      // Nothing more once the endpoint is deleted or disabled mid-way (or its app deleted), and
      // nothing of an event whose payload was erased.
      `SELECT d.id FROM deliveries d JOIN endpoints ep ON ep.id = d.endpoint_id JOIN events ev ON ev.id = d.event_id
       WHERE d.endpoint_id = $1 AND d.status = 'failed' AND ep.deleted_at IS NULL AND NOT ep.disabled
         AND ev.data_erased_at IS NULL
         AND ${matching.where}
       ORDER BY d.event_id, d.id LIMIT ${Number(limit)}`,
      [spec.endpointId, ...matching.values],
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
         UPDATE deliveries SET status = 'pending', next_attempt_at = NULL, replay_id = NULL, updated_at = now()
         WHERE id = ANY($1) RETURNING id, account_id, app_id, event_id, endpoint_id)
       INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, replay_id, created_at)
       SELECT n.attempt_id, d.account_id, d.app_id, d.id, d.event_id, d.endpoint_id,
              (SELECT COALESCE(MAX(a.attempt_number), 0) + 1 FROM attempts a WHERE a.delivery_id = d.id AND a.event_id = d.event_id),
              'pending', ep.url, now(), $3, now()
       FROM unnest($1::text[], $2::text[]) AS n(delivery_id, attempt_id)
       JOIN d ON d.id = n.delivery_id JOIN endpoints ep ON ep.id = d.endpoint_id`,
      [ids, attemptIds, spec.replayId],
    );
    return { attemptIds, more };
  });
}

/**
 * Frees what the replay claimed and did not take (its endpoint was disabled), then marks it
 * `completed`, with its `replay.completed` operational event, the first time only. In that
 * order: a crash between them leaves it `running`, and the message sent again completes it; the
 * other way round, its claims would stay for good. Returns the operational event's outbox rows.
 */
export async function completeReplay(pool: Pool, replayId: string): Promise<StagedMessage[]> {
  await pool.query("UPDATE deliveries SET replay_id = NULL WHERE replay_id = $1", [replayId]);
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ endpoint_id: string; queued: number; completed_at: Date }>(
      `UPDATE replays SET status = 'completed', completed_at = now() WHERE id = $1 AND status <> 'completed'
       RETURNING endpoint_id, queued, completed_at`,
      [replayId],
    );
    return stageNotices(
      tx,
      rows.map((r) => ({
        type: "replay.completed",
        endpointId: r.endpoint_id,
        data: { replay: replayId, queued: r.queued, completed_at: r.completed_at.toISOString() },
      })),
    );
  });
}
