import { prepared, type Queryable } from "../pool.ts";

/** A pending attempt with everything a sender needs to make it (senders have no database). */
export type AttemptToSend = {
  id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  app_id: string;
  /** The event's account: a sender's transformation workers are shared by account (@herald/transform). */
  account_id: string;
  attempt_number: number;
  url: string;
  /** Names only, each value '', once sealed; the values, in rows sealed before 0010. */
  headers: Record<string, string>;
  /** Sealed (secrets.ts), like the secrets: they cross the broker as stored. */
  headers_sealed: string | null;
  /** The endpoint's authentication (mutual TLS, OAuth2), sealed (secrets.ts); null: none. */
  auth_sealed: string | null;
  /** The endpoint's transformation (JavaScript, at most 64 KiB), run by the sender; null: none. */
  transformation: string | null;
  /** Sealed (secrets.ts): they cross the broker as stored. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  type: string;
  /**
   * The event's data as stored JSON text, not parsed, when it is at most INLINE_DATA_BYTES;
   * larger, null: `eventData` reads it when it is sent, a few at a time.
   */
  data: string | null;
  /** The data's size as accepted (null: accepted before sizes were kept). */
  data_bytes: number | null;
  created_at: Date;
  trace_context: string | null;
  /** The replay that made it, if one did. */
  replay_id: string | null;
};

/**
 * The senders' lanes: first attempts of new events (`live`) never queue behind retries and
 * replays (`backlog`); each lane has capacity of its own in every sender.
 */
export type Lane = "live" | "backlog";
export const laneOf = (a: Pick<AttemptToSend, "attempt_number" | "replay_id">): Lane =>
  a.attempt_number === 1 && a.replay_id === null ? "live" : "backlog";

/**
 * Event data up to this size comes with the attempts released; larger, it is read apart, once
 * an event however many of its attempts go, and a few events at a time (the dispatcher's
 * publishAttempts): a hundred endpoints of an event of a megabyte are never a hundred copies.
 */
export const INLINE_DATA_BYTES = 16 * 1024;

/** The columns of an `AttemptToSend`, from attempts `a`, endpoints `ep` and events `ev`. */
export const SEND_COLUMNS = `a.id, a.delivery_id, a.event_id, a.endpoint_id, a.app_id, a.attempt_number, a.replay_id,
  ep.url, ep.headers, ep.headers_sealed, ep.auth_sealed, ep.transformation, ep.secret, ep.previous_secret, ep.previous_secret_expires_at,
  ev.type, CASE WHEN ev.data_bytes <= ${INLINE_DATA_BYTES} THEN ev.data::text END AS data, ev.data_bytes,
  ev.created_at, ev.trace_context, ev.account_id`;

const EVENT_DATA = prepared("event-data", "SELECT id, data::text AS data FROM events WHERE id = ANY($1)");

/** These events' data as stored JSON text, by id; an event gone meanwhile is absent. */
export async function eventData(db: Queryable, eventIds: string[]): Promise<Map<string, string>> {
  if (!eventIds.length) return new Map();
  const { rows } = await db.query<{ id: string; data: string }>(EVENT_DATA([eventIds]));
  return new Map(rows.map((r) => [r.id, r.data]));
}

/**
 * These attempts, still `pending`, with what a sender needs, oldest first: the sweeper's, sent
 * again. Those of an endpoint deleted or disabled meanwhile are left out (`checkDue` ends them).
 */
export async function attemptsToSend(db: Queryable, attemptIds: string[]): Promise<AttemptToSend[]> {
  if (!attemptIds.length) return [];
  const { rows } = await db.query<AttemptToSend & { sendable: boolean }>(
    `SELECT ${SEND_COLUMNS}, ep.deleted_at IS NULL AND NOT ep.disabled AS sendable
     FROM attempts a JOIN endpoints ep ON ep.id = a.endpoint_id JOIN events ev ON ev.id = a.event_id
     WHERE a.id = ANY($1) AND a.status = 'pending'
     ORDER BY a.id`,
    [attemptIds],
  );
  // Filtered here, not in the WHERE: a condition on endpoints there leads the planner to
  // start from the endpoints and read every attempt of each (47 ms a call, measured).
  return rows.filter((r) => r.sendable);
}

/**
 * Claims the attempts a crash or a lost message left with no result: sent before
 * `sentBefore`, oldest first. They are marked sent now, so another sweep leaves them alone
 * for a deadline. (Attempts never sent wait in their endpoint's queue: the release gate's.)
 *
 * Each endpoint with open attempts is found by a skip scan of their index, and of each only
 * the head of its open attempts is read: the gate releases in the order due, so what is in
 * flight is at the head, and a paused endpoint's million held attempts behind it are not read.
 */
export async function claimStranded(
  db: Queryable,
  { sentBefore, limit }: { sentBefore: Date; limit: number },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH RECURSIVE e(endpoint_id) AS (
       (SELECT endpoint_id FROM attempts WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
       UNION ALL
       SELECT (SELECT a.endpoint_id FROM attempts a WHERE a.status = 'pending' AND a.endpoint_id > e.endpoint_id
               ORDER BY a.endpoint_id LIMIT 1)
       FROM e WHERE e.endpoint_id IS NOT NULL),
     f AS (
       SELECT e.endpoint_id, COALESCE(fl.in_flight, 0) AS in_flight, fl.fifo_sent
       FROM e LEFT JOIN endpoint_flows fl ON fl.endpoint_id = e.endpoint_id WHERE e.endpoint_id IS NOT NULL)
     UPDATE attempts SET sent_at = now() WHERE id IN (
       SELECT a.id FROM attempts a
       WHERE a.id IN (SELECT h.id FROM f CROSS JOIN LATERAL (${HEAD_OF_OPEN}) h WHERE h.sent_at < $1)
         AND a.status = 'pending' AND a.sent_at < $1
       ORDER BY a.sent_at LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED)
     RETURNING id`,
    [sentBefore, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * The head of endpoint `f`'s open attempts, in the order due: as many as it has in flight,
 * twice over and ten more, for attempts released out of order (a due retry, a replay); and
 * of a fifo endpoint, its open attempt of the earliest event (its head, which may be due after
 * thousands behind it) and the attempt it released last, which may no longer be the head.
 */
export const HEAD_OF_OPEN = `(SELECT a.id, a.sent_at FROM attempts a
  WHERE a.endpoint_id = f.endpoint_id AND a.status = 'pending'
  ORDER BY a.scheduled_at, a.id LIMIT f.in_flight * 2 + 10)
  UNION (SELECT a.id, a.sent_at FROM attempts a
  WHERE a.endpoint_id = f.endpoint_id AND a.status = 'pending'
  ORDER BY a.event_id, a.attempt_number LIMIT 1)
  UNION (SELECT a.id, a.sent_at FROM attempts a WHERE a.id = f.fifo_sent AND a.status = 'pending')`;
