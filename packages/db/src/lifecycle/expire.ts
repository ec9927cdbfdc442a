import { isOpen } from "@herald/contracts/statuses";
import { idFloor } from "../ids.ts";
import type { PoolClient, Queryable } from "../pool.ts";
import { lockDeliveries } from "./locks.ts";
import { partitionSuffix } from "./partitions.ts";

/** The longest retention, ten years: longer is a typo, not a policy (RETENTION, an account's own). */
export const RETENTION_MAX_SECONDS = 3660 * 86_400;

/**
 * Where the row purge looks for an account's expired events. Whole ranges of the log go by
 * partition drop (partitions.ts) once they are older than the longest retention; rows go one by
 * one only where that does not reach: an account with a shorter retention, between
 * `notBefore` (the longest retention's cutoff) and its own cutoff; the catch-all partitions
 * (`legacy`, `default`), which are never ranges of their own; and a range past the longest
 * retention held by what it still has on its way, whose other events go meanwhile.
 */
export type ExpireScope = {
  accountId: string;
  /** The account's cutoff: events made before it go. */
  olderThan: Date;
  /** Only events made at or after this; null: no lower bound. */
  notBefore: Date | null;
  /**
   * One partition's suffix, or null for the whole log: a catch-all (`default`, `legacy`), or a
   * range past the longest retention that a drop cannot take yet (`rangeHeld`).
   */
  partition: string | null;
};

/**
 * Retention, a row at a time, in the caller's transaction: an account's events older than its
 * retention go with their deliveries and attempts, `limit` events a call, under the locking
 * rule. An event is taken only once it is done with: fanned out (it has deliveries, or fan-out
 * marked it `fanned_out_at`, or its payload was erased) and with no delivery `pending` or
 * `retrying`, rechecked under the deliveries' locks (a replay may have reopened one). Nothing is
 * cut off mid-schedule, and an event whose fan-out is still on its way is never removed before it.
 *
 * Returns how many events went, and whether a full batch was looked at (there may be more).
 * Idempotent: what one call leaves, the next takes.
 */
export async function expireEvents(
  tx: PoolClient,
  scope: ExpireScope,
  limit: number,
): Promise<{ events: number; more: boolean }> {
  if (scope.olderThan.getTime() <= 0 || limit <= 0) return { events: 0, more: false };
  // Ids are time-sortable: every event made before the cutoff has an id below this floor.
  const before = idFloor("event", scope.olderThan.getTime());
  const from = scope.notBefore === null ? "" : idFloor("event", scope.notBefore.getTime());
  if (from >= before) return { events: 0, more: false };
  const table = scope.partition === null ? "events" : `events_${partitionSuffix(scope.partition)}`;
  const { rows } = await tx.query<{ id: string }>(
    `SELECT ev.id FROM ${table} ev
     WHERE ev.account_id = $1 AND ev.id < $2 AND ev.id >= $4
       AND (ev.fanned_out_at IS NOT NULL OR ev.data_erased_at IS NOT NULL
            OR EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id))
       AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id AND d.status IN ('pending', 'retrying'))
     ORDER BY ev.id LIMIT $3`,
    [scope.accountId, before, limit, from],
  );
  if (!rows.length) return { events: 0, more: false };
  const candidates = rows.map((r) => r.id);
  const { rows: deliveries } = await tx.query<{ id: string; event_id: string }>(
    "SELECT id, event_id FROM deliveries WHERE event_id = ANY($1)",
    [candidates],
  );
  const locked = await lockDeliveries(
    tx,
    deliveries.map((d) => d.id),
  );
  const kept = new Set(
    deliveries.filter((d) => isOpen(locked.get(d.id)?.status ?? "dropped")).map((d) => d.event_id),
  );
  const gone = candidates.filter((id) => !kept.has(id));
  const { rowCount } = await tx.query(
    `WITH a AS (DELETE FROM attempts WHERE event_id = ANY($1)),
          d AS (DELETE FROM deliveries WHERE event_id = ANY($1))
     DELETE FROM events WHERE id = ANY($1)`,
    [gone],
  );
  return { events: rowCount ?? 0, more: rows.length === limit };
}

/**
 * The small tables' housekeeping: sessions past their expiry (a portal session made from a
 * dashboard session never outlives it, so none is left pointing at a parent removed here), and
 * replays completed longer ago than their account's retention. At most `limit` rows of each a
 * call; returns how many went.
 */
export async function removeExpired(
  pool: Queryable,
  defaultRetentionMs: number,
  limit: number,
  auditRetentionMs = 0,
): Promise<{ sessions: number; replays: number; audit: number }> {
  const sessions = await pool.query(
    `DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < now() LIMIT $1)`,
    [limit],
  );
  const replays = await pool.query(
    `DELETE FROM replays WHERE id IN (
       SELECT r.id FROM replays r JOIN accounts a ON a.id = r.account_id
       WHERE r.status = 'completed'
         AND r.completed_at < now() - COALESCE(a.retention_seconds::bigint * 1000, $1::bigint) * interval '1 millisecond'
       LIMIT $2)`,
    [defaultRetentionMs, limit],
  );
  // The audit log: as long as the account's events, or AUDIT_RETENTION when that is longer.
  const audit = await pool.query(
    `DELETE FROM audit_log WHERE id IN (
       SELECT l.id FROM audit_log l JOIN accounts a ON a.id = l.account_id
       WHERE l.created_at < now() - GREATEST(COALESCE(a.retention_seconds::bigint * 1000, $1::bigint), $3::bigint) * interval '1 millisecond'
       LIMIT $2)`,
    [defaultRetentionMs, limit, auditRetentionMs],
  );
  return { sessions: sessions.rowCount ?? 0, replays: replays.rowCount ?? 0, audit: audit.rowCount ?? 0 };
}
