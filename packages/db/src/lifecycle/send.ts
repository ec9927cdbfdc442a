import type { Queryable } from "../pool.ts";

/** A pending attempt with everything a sender needs to make it (senders have no database). */
export type AttemptToSend = {
  id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  app_id: string;
  attempt_number: number;
  url: string;
  headers: Record<string, string>;
  /** Sealed (secrets.ts): they cross the broker as stored. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  type: string;
  /** The event's data as stored JSON text, not parsed. */
  data: string;
  created_at: Date;
  trace_context: string | null;
  sendable: boolean;
};

/** These attempts, or the first attempts of these events that no sender was handed yet. */
export type Which = string[] | { firstOfEvents: string[] };

/**
 * The attempts to hand to the senders, still `pending`, oldest first. Claimed in two steps
 * around the publish: read here, then `markSent` once the broker confirmed them. A process
 * that dies in between leaves them unsent, and the sweeper sends them (a duplicate at worst).
 * Those of an endpoint deleted or disabled meanwhile are left to the sweeper too, which ends
 * their deliveries as such (`checkDue`): a replay running when its endpoint goes sends no more.
 */
export async function attemptsToSend(db: Queryable, which: Which): Promise<AttemptToSend[]> {
  const byEvent = !Array.isArray(which);
  const ids = byEvent ? which.firstOfEvents : which;
  if (!ids.length) return [];
  const { rows } = await db.query<AttemptToSend>(
    `SELECT a.id, a.delivery_id, a.event_id, a.endpoint_id, a.app_id, a.attempt_number,
            ep.url, ep.headers, ep.secret, ep.previous_secret, ep.previous_secret_expires_at,
                        ev.type, ev.data::text AS data, ev.created_at, ev.trace_context,
            ep.deleted_at IS NULL AND NOT ep.disabled AS sendable
     FROM attempts a JOIN endpoints ep ON ep.id = a.endpoint_id JOIN events ev ON ev.id = a.event_id
     WHERE ${byEvent ? "a.event_id = ANY($1) AND a.attempt_number = 1 AND a.sent_at IS NULL" : "a.id = ANY($1)"}
              AND a.status = 'pending'
     ORDER BY a.id`,
    [ids],
  );
  // Filtered here, not in the WHERE: a condition on endpoints there leads the planner to
  // start from the endpoints and read every attempt of each (47 ms a call, measured).
  return rows.filter((r) => r.sendable);
}

/**
 * Records that these attempts are with the senders: the sweeper's deadline runs from here.
 * An attempt whose result is being recorded at this moment is skipped, not waited for (it is
 * locked by a transaction that holds its delivery first: waiting could close a cycle). No
 * condition on `status`: on a completed attempt `sent_at` is harmless, and that condition
 * made the planner walk the status index through every pending attempt (3.3 ms a call
 * instead of 1, measured).
 */
export async function markSent(db: Queryable, attemptIds: string[]): Promise<void> {
  if (!attemptIds.length) return;
  await db.query(
    `UPDATE attempts SET sent_at = now() WHERE id IN (
              SELECT id FROM attempts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)`,
    [attemptIds],
  );
}

/**
 * Claims the attempts a crash left behind, oldest due first: scheduled ones never handed to a
 * sender that were due before `dueBefore`, and sent ones with no result since before
 * `sentBefore`. They are marked sent now, so another sweep leaves them alone for a deadline.
 */
export async function claimStranded(
  db: Queryable,
  { dueBefore, sentBefore, limit }: { dueBefore: Date; sentBefore: Date; limit: number },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE attempts SET sent_at = now() WHERE id IN (
       SELECT id FROM attempts
       WHERE status = 'pending' AND ((sent_at IS NULL AND scheduled_at < $1) OR sent_at < $2)
       ORDER BY scheduled_at LIMIT $3 FOR NO KEY UPDATE SKIP LOCKED)
     RETURNING id`,
    [dueBefore, sentBefore, limit],
  );
  return rows.map((r) => r.id);
}
