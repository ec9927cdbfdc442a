import { type Pool, prepared } from "../pool.ts";
import { type AttemptToSend, SEND_COLUMNS } from "./send.ts";

const RELEASE_FAST = prepared(
  "release-fast",
  `WITH f AS MATERIALIZED (
       SELECT f.endpoint_id, f.in_flight, LEAST(ep.max_in_flight, $3::int) AS cap
       FROM endpoint_flows f JOIN endpoints ep ON ep.id = f.endpoint_id
       WHERE f.endpoint_id = ANY($1::text[]) AND ep.rate_limit IS NULL AND ep.ordering = 'none'
         AND ep.deleted_at IS NULL AND NOT ep.disabled
         AND f.pause_reason IS NULL AND f.paused_until IS NULL
         AND (f.slow_until IS NULL OR f.slow_until <= clock_timestamp())
       ORDER BY f.endpoint_id FOR NO KEY UPDATE OF f),
     ready_by AS (
       SELECT GREATEST(clock_timestamp(), (SELECT max(scheduled_at) FROM attempts WHERE id = ANY($2::text[]))) AS at),
     ready AS (
       SELECT q.id, q.endpoint_id, q.n, GREATEST(0, f.cap - f.in_flight) AS room
       FROM f CROSS JOIN ready_by CROSS JOIN LATERAL (
         SELECT a.id, a.endpoint_id, row_number() OVER (ORDER BY a.scheduled_at, a.id) AS n
         FROM (SELECT id, endpoint_id, scheduled_at FROM attempts a
               WHERE a.endpoint_id = f.endpoint_id AND a.status = 'pending' AND a.sent_at IS NULL
                 AND a.scheduled_at <= ready_by.at
               ORDER BY a.scheduled_at, a.id LIMIT GREATEST(0, f.cap - f.in_flight) + 1) a) q),
     s AS (
       UPDATE attempts a SET sent_at = clock_timestamp() WHERE a.id IN (
         SELECT id FROM attempts WHERE id IN (SELECT id FROM ready WHERE n <= room)
           AND status = 'pending' AND sent_at IS NULL
         ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
       RETURNING a.*),
     taken AS (SELECT endpoint_id, count(*)::int AS n FROM s GROUP BY endpoint_id),
     more AS (SELECT endpoint_id, bool_or(n > room) AS held FROM ready GROUP BY endpoint_id),
     w AS (
       UPDATE endpoint_flows fl SET in_flight = fl.in_flight + COALESCE(taken.n, 0),
              held_by = CASE WHEN more.held THEN 'max_in_flight' END,
              next_release_at = CASE WHEN more.held THEN clock_timestamp() + interval '1 second' END
       FROM f LEFT JOIN taken ON taken.endpoint_id = f.endpoint_id LEFT JOIN more ON more.endpoint_id = f.endpoint_id
       WHERE fl.endpoint_id = f.endpoint_id)
     SELECT f.endpoint_id AS handled, COALESCE(more.held, false) AS held, x.*
     FROM f LEFT JOIN more ON more.endpoint_id = f.endpoint_id
     LEFT JOIN (SELECT ${SEND_COLUMNS}, a.scheduled_at AS due_at
                FROM s a JOIN endpoints ep ON ep.id = a.endpoint_id JOIN events ev ON ev.id = a.event_id) x
       ON x.endpoint_id = f.endpoint_id
     ORDER BY f.endpoint_id, x.due_at, x.id`,
);

/**
 * The release gate in one statement, for endpoints that only an in-flight limit can hold
 * back: no rate limit, no order to keep, no pause, no slow-down, neither deleted nor disabled. Nearly every
 * endpoint, nearly always: fan-out's path to the senders stays one round trip, and the flow's
 * lock is held for one statement, not across a transaction's turns of the event loop.
 *
 * `f` locks the flows in id order and, having waited, reads their latest `in_flight`; the
 * queue's head is read under the statement's snapshot, so an attempt another release took
 * meanwhile is skipped by the update's recheck (`sent_at IS NULL`): fewer go, never more.
 * Attempts are taken SKIP LOCKED: one another release took meanwhile may be having its result
 * recorded, by a statement that waits for this one's flow (locks.ts: flows last); waiting for
 * it would close a cycle. The flows are written with what was actually taken.
 *
 * Returns the attempts to publish and every endpoint it handled; the caller takes the others
 * through the full gate (release.ts).
 */
type Row = Partial<AttemptToSend> & { handled: string; held: boolean; due_at: Date | null };

export async function releaseFast(
  pool: Pool,
  endpointIds: string[],
  due: string[],
  maxInFlight: number,
): Promise<{ send: AttemptToSend[]; handled: Set<string>; held: string[] }> {
  const { rows } = await pool.query<Row>(RELEASE_FAST([endpointIds, due, maxInFlight]));
  const handled = new Set(rows.map((r) => r.handled));
  const held = [...new Set(rows.filter((r) => r.held).map((r) => r.handled))];
  const send = rows
    .filter((r) => r.id)
    .map(({ handled: _h, held: _held, due_at: _d, ...a }) => a as AttemptToSend);
  return { send, handled, held };
}
