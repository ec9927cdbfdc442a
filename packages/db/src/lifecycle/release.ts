import { idFloor } from "../ids.ts";
import { inTransaction, type Pool, type PoolClient, prepared } from "../pool.ts";
import { type Admission, admit, type EndpointLimits, type Flow, type FlowSettings } from "./flow.ts";
import { type FifoHead, laterEvent, orderingHold } from "./ordering.ts";
import { releaseFast } from "./releaseFast.ts";
import { type AttemptToSend, HEAD_OF_OPEN, SEND_COLUMNS } from "./send.ts";

/**
 * The release gate: the one way an attempt reaches the senders the first time. Attempts wait
 * in each endpoint's queue (pending, `sent_at` null, in the order due) and go out only as
 * far as the endpoint's flow allows (flow.ts): its pause, its in-flight limit, its rate
 * limit, and for a `fifo` endpoint its order (ordering.ts). What stays waits in PostgreSQL, not in RabbitMQ, and the endpoint's
 * `next_release_at` says when to look again; the dispatchers poll for it.
 *
 * One transaction, under the locking rule (locks.ts) with the flows last: the endpoints'
 * flows are locked (in id order; the poll skips those another dispatcher holds), then what is
 * in flight is counted and the queue's head read (a statement after the lock sees every
 * release committed before it), then the attempts let go are marked sent and the flows
 * written. The caller publishes after the commit; should that fail, `unrelease` puts them
 * back. So two dispatchers never release past a limit, and nothing waits unknown.
 */
export type ReleaseTarget =
  /** These endpoints' queues; `due`: attempts known to be due, whatever the clock says. */
  | { endpoints: string[]; due?: string[] }
  /** The endpoints whose `next_release_at` has come, this many at most. */
  | { poll: number };

export type Release = {
  /** Round robin by endpoint, each endpoint's in the order due: no endpoint's backlog first. */
  send: AttemptToSend[];
  /** Waiting attempts of deleted or disabled endpoints: to be ended (`checkDue`), not sent. */
  stale: string[];
  /** Endpoints with attempts left waiting, and why. */
  held: { endpointId: string; heldBy: NonNullable<Admission["heldBy"]> }[];
  /** Endpoints looked at: fewer than a poll's limit means the poll is done for now. */
  endpoints: number;
};

type LockedFlow = Flow &
  EndpointLimits &
  FifoHead & {
    deleted: boolean;
    disabled: boolean;
    fifo: boolean;
    fifo_after: string | null;
    fifo_sent: string | null;
    /** The head of its queue (of a fifo endpoint: the one attempt that may go), and the time the lock was had. */
    ready: string[];
    now: Date;
  };

/** Attempts of a deleted or disabled endpoint ended a pass. */
const STALE_BATCH = 500;

const FLOW_COLUMNS = `f.endpoint_id, f.in_flight, f.tokens, f.tokens_at, f.limit_now, f.slow_until, f.paused_until,
  f.pause_reason, f.failures, f.opens, f.probe_attempt_id, f.held_by, f.next_release_at, f.fifo_after, f.fifo_sent,
  ep.rate_limit, ep.max_in_flight, ep.deleted_at IS NOT NULL AS deleted, ep.disabled, ep.event_types,
  ep.ordering = 'fifo' AND ep.deleted_at IS NULL AND NOT ep.disabled AS fifo, ep.account_id, ep.app_id`;

/**
 * A fifo endpoint `f`'s head: its open attempt of the earliest event; whether the attempt it
 * released last, another, is still in flight (the head changed under it: a replay, a late
 * fan-out); and, for a head due to go, whether an event of its app, of a type it takes,
 * accepted before it, after `fifo_after` and since $4, still awaits its fan-out (it has no
 * delivery, and fan-out did not mark it as having none).
 */
const FIFO_HEAD = `SELECT a.id AS head_id, a.event_id AS head_event_id, a.sent_at AS head_sent_at, a.scheduled_at AS head_due_at,
    EXISTS (SELECT 1 FROM attempts s WHERE s.id = f.fifo_sent AND s.id <> a.id AND s.status = 'pending'
            AND s.sent_at IS NOT NULL) AS other_in_flight,
    CASE WHEN a.sent_at IS NULL AND a.scheduled_at <= ready_by.at THEN EXISTS (
      SELECT 1 FROM events e
      WHERE e.account_id = f.account_id AND e.app_id = f.app_id AND e.id < a.event_id
        AND e.id >= $4::text AND e.id > COALESCE(f.fifo_after, '')
        AND e.fanned_out_at IS NULL AND e.data_erased_at IS NULL
        -- Only the types it takes: an endpoint of a rare type in a busy app reads no deliveries.
        AND (COALESCE(cardinality(f.event_types), 0) = 0 OR e.type = ANY(f.event_types))
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)) END AS head_behind_fan_out,
    (SELECT count(*)::int FROM (SELECT 1 FROM attempts q WHERE q.endpoint_id = f.endpoint_id AND q.status = 'pending'
                                 LIMIT 2) x) AS fifo_queued
  FROM attempts a
  -- f.fifo here too: the join's condition is checked only after its lateral side ran, which for
  -- an unordered endpoint of a busy app read its last seconds of events on every release.
  WHERE f.fifo AND a.endpoint_id = f.endpoint_id AND a.status = 'pending'
  ORDER BY a.event_id, a.attempt_number LIMIT 1`;

/**
 * The flows chosen by `where`, locked, each read with the head of its queue: up to its
 * in-flight limit + 1 attempts due (the statement's snapshot: one another release took
 * meanwhile is skipped when marked sent), and the time. Prepared: planning it (the partitioned
 * attempts, several times over) cost more than running it, tens of ms under load.
 */
const lockedFlows = (name: string, where: string, order: string, limit: string, lock: string) =>
  prepared(
    name,
    `WITH f AS MATERIALIZED (
       SELECT ${FLOW_COLUMNS} FROM endpoint_flows f JOIN endpoints ep ON ep.id = f.endpoint_id
       WHERE ${where} ORDER BY f.${order} ${limit} ${lock}),
     ready_by AS (
       SELECT GREATEST(clock_timestamp(), (SELECT max(scheduled_at) FROM attempts WHERE id = ANY($2::text[]))) AS at)
     SELECT f.*, h.*, clock_timestamp() AS now,
       CASE WHEN f.fifo THEN
         CASE WHEN h.head_sent_at IS NULL AND h.head_due_at <= ready_by.at AND NOT h.head_behind_fan_out
                   AND NOT h.other_in_flight
              THEN ARRAY[h.head_id] ELSE '{}'::text[] END
       ELSE ARRAY(
         SELECT a.id FROM attempts a
         WHERE a.endpoint_id = f.endpoint_id AND a.status = 'pending' AND a.sent_at IS NULL AND a.scheduled_at <= ready_by.at
         ORDER BY a.scheduled_at, a.id
         LIMIT CASE WHEN f.deleted OR f.disabled THEN ${STALE_BATCH} ELSE LEAST(f.max_in_flight, $3::int) + 1 END) END AS ready
     FROM f CROSS JOIN ready_by LEFT JOIN LATERAL (${FIFO_HEAD}) h ON f.fifo
     ORDER BY f.${order}`,
  );
/** The endpoints whose `next_release_at` has come, skipping those another dispatcher holds. */
const LOCK_POLLED = lockedFlows(
  "release-gate-poll",
  "f.next_release_at <= clock_timestamp()",
  "next_release_at",
  "LIMIT $1",
  "FOR NO KEY UPDATE OF f SKIP LOCKED",
);
/** The endpoints given, in id order. */
const LOCK_GIVEN = lockedFlows(
  "release-gate-given",
  "f.endpoint_id = ANY($1)",
  "endpoint_id",
  "",
  "FOR NO KEY UPDATE OF f",
);

/** Locks the flows (in id order; a poll skips those another dispatcher holds) and reads them with their queues' heads. */
async function lockToRelease(tx: PoolClient, target: ReleaseTarget, s: FlowSettings): Promise<LockedFlow[]> {
  const due = "due" in target ? (target.due ?? []) : [];
  const fanOutFloor = idFloor("event", Date.now() - s.fifoFanOutWaitMs);
  if ("poll" in target) {
    const { rows } = await tx.query<LockedFlow>(LOCK_POLLED([target.poll, due, s.maxInFlight, fanOutFloor]));
    return rows;
  }
  const ids = [...new Set(target.endpoints)].sort();
  const select = (list: string[]) =>
    tx.query<LockedFlow>(LOCK_GIVEN([list, due, s.maxInFlight, fanOutFloor]));
  const { rows } = await select(ids);
  if (rows.length === ids.length) return rows;
  // Endpoints made before flows were (or by an older gateway): their rows, in id order too.
  const found = new Set(rows.map((r) => r.endpoint_id));
  const missing = ids.filter((id) => !found.has(id));
  await tx.query(
    `INSERT INTO endpoint_flows (endpoint_id)
     SELECT id FROM unnest($1::text[]) AS id WHERE EXISTS (SELECT 1 FROM endpoints WHERE endpoints.id = id)
     ORDER BY id ON CONFLICT DO NOTHING`,
    [missing],
  );
  return [...rows, ...(await select(missing)).rows].sort((a, b) => (a.endpoint_id < b.endpoint_id ? -1 : 1));
}

/** Each endpoint's attempts in turns, one of each, then the next of each, each's in its order. */
function inTurns(rows: AttemptToSend[]): AttemptToSend[] {
  const lists = new Map<string, AttemptToSend[]>();
  for (const r of rows) lists.set(r.endpoint_id, [...(lists.get(r.endpoint_id) ?? []), r]);
  const out: AttemptToSend[] = [];
  const all = [...lists.values()];
  for (let i = 0; out.length < rows.length; i++) for (const l of all) if (i < l.length) out.push(l[i]!);
  return out;
}

export async function release(pool: Pool, target: ReleaseTarget, s: FlowSettings): Promise<Release> {
  if ("endpoints" in target) {
    const ids = [...new Set(target.endpoints)].sort();
    const fast = await releaseFast(pool, ids, target.due ?? [], s.maxInFlight);
    const rest = ids.filter((id) => !fast.handled.has(id));
    const slow = rest.length ? await releaseHeld(pool, { endpoints: rest, due: target.due }, s) : null;
    return {
      send: inTurns([...fast.send, ...(slow?.send ?? [])]),
      stale: slow?.stale ?? [],
      held: [
        ...fast.held.map((endpointId) => ({ endpointId, heldBy: "max_in_flight" as const })),
        ...(slow?.held ?? []),
      ],
      endpoints: ids.length,
    };
  }
  return releaseHeld(pool, target, s);
}

/**
 * The full gate, for the endpoints a policy beyond the in-flight limit applies to (a rate
 * limit, a pause, a slow-down, a deletion) and for the poll: flows locked with their queues'
 * heads, what goes decided by flow.ts, the attempts and flows written, in one transaction.
 */
async function releaseHeld(pool: Pool, target: ReleaseTarget, s: FlowSettings): Promise<Release> {
  return inTransaction(pool, async (tx) => {
    const flows = await lockToRelease(tx, target, s);
    if (!flows.length) return { send: [], stale: [], held: [], endpoints: 0 };
    const chosen: string[][] = [];
    const stale: string[] = [];
    const held: Release["held"] = [];
    for (const flow of flows) {
      const { ready, now } = flow;
      if (flow.deleted || flow.disabled) {
        stale.push(...ready);
        flow.held_by = null;
        flow.next_release_at = ready.length >= STALE_BATCH ? now : null;
        continue;
      }
      // A fifo endpoint: its head alone, one at a time.
      const limits = flow.fifo ? { rate_limit: flow.rate_limit, max_in_flight: 1 } : flow;
      const a = admit(flow, limits, flow.in_flight, ready.length, now, s);
      const taken = ready.slice(0, a.take);
      chosen.push(taken);
      if (a.probe) flow.probe_attempt_id = taken[0]!;
      const hold = flow.fifo ? orderingHold(flow, taken.length, a, now) : a;
      if (flow.fifo && taken.length) {
        flow.fifo_after = laterEvent(flow.fifo_after, flow.head_event_id);
        flow.fifo_sent = taken[0]!;
      }
      flow.held_by = hold.heldBy;
      flow.next_release_at = hold.retryAt;
      if (hold.heldBy) held.push({ endpointId: flow.endpoint_id, heldBy: hold.heldBy });
    }
    const ids = chosen.flat();
    const { rows } = await tx.query<AttemptToSend>(
      `WITH s AS (
         UPDATE attempts a SET sent_at = clock_timestamp() WHERE a.id IN (
           SELECT id FROM attempts WHERE id = ANY($1) AND status = 'pending' AND sent_at IS NULL
           ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
         RETURNING a.*),
       taken AS (SELECT endpoint_id, count(*)::int AS n FROM s GROUP BY endpoint_id),
       f AS (
         UPDATE endpoint_flows f SET in_flight = f.in_flight + COALESCE((SELECT n FROM taken WHERE taken.endpoint_id = f.endpoint_id), 0),
                tokens = u.tokens, tokens_at = u.tokens_at, limit_now = u.limit_now,
                slow_until = u.slow_until, paused_until = u.paused_until, pause_reason = u.pause_reason,
                -- A probe chosen but not taken (another release had it) is no probe.
                probe_attempt_id = CASE WHEN u.probe_attempt_id = ANY($1) AND u.probe_attempt_id NOT IN (SELECT id FROM s)
                                        THEN NULL ELSE u.probe_attempt_id END, held_by = u.held_by, next_release_at = u.next_release_at,
                fifo_after = u.fifo_after, fifo_sent = u.fifo_sent
         FROM unnest($2::text[], $3::float8[], $4::timestamptz[], $5::int[], $6::timestamptz[], $7::timestamptz[],
                     $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::text[])
           AS u(endpoint_id, tokens, tokens_at, limit_now, slow_until, paused_until, pause_reason, probe_attempt_id, held_by, next_release_at, fifo_after, fifo_sent)
         WHERE f.endpoint_id = u.endpoint_id)
       SELECT ${SEND_COLUMNS} FROM s a JOIN endpoints ep ON ep.id = a.endpoint_id JOIN events ev ON ev.id = a.event_id`,
      [
        ids,
        flows.map((f) => f.endpoint_id),
        flows.map((f) => f.tokens),
        flows.map((f) => f.tokens_at),
        flows.map((f) => f.limit_now),
        flows.map((f) => f.slow_until),
        flows.map((f) => f.paused_until),
        flows.map((f) => f.pause_reason),
        flows.map((f) => f.probe_attempt_id),
        flows.map((f) => f.held_by),
        flows.map((f) => f.next_release_at),
        flows.map((f) => f.fifo_after),
        flows.map((f) => f.fifo_sent),
      ],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const send = inTurns(chosen.flatMap((list) => list.flatMap((id) => byId.get(id) ?? [])));
    return { send, stale, held, endpoints: flows.length };
  });
}

/**
 * Puts back attempts released but never handed over (their publish failed): unsent again, no
 * longer in flight, and their endpoints looked at again at once. Returns those it put back, or
 * found put back or ended already. One locked this moment is skipped (waiting for it could close
 * a cycle with the gate, which locks flows first): the caller tries the rest again. What is
 * never put back, the sweeper sends once ATTEMPT_DEADLINE has passed.
 */
export async function unrelease(pool: Pool, attemptIds: string[]): Promise<string[]> {
  if (!attemptIds.length) return [];
  const { rows } = await pool.query<{ id: string }>(
    `WITH a AS (
       UPDATE attempts SET sent_at = NULL WHERE id IN (
         SELECT id FROM attempts WHERE id = ANY($1) AND status = 'pending' AND sent_at IS NOT NULL
         ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
       RETURNING id, endpoint_id),
     f AS (
       UPDATE endpoint_flows f SET next_release_at = now(), in_flight = GREATEST(0, f.in_flight - b.n)
       FROM (SELECT endpoint_id, count(*)::int AS n FROM a GROUP BY endpoint_id) b
       WHERE f.endpoint_id = b.endpoint_id)
     SELECT id FROM a
     UNION ALL
     SELECT id FROM attempts WHERE id = ANY($1) AND (status <> 'pending' OR sent_at IS NULL)`,
    [attemptIds],
  );
  return rows.map((r) => r.id);
}

/**
 * The sweeper's check that no endpoint has attempts waiting unknown to the gate: each endpoint
 * whose oldest unsent attempt was due before `dueBefore` (a retry whose wake-up message was
 * lost) is looked at now, unless it already is. One step per endpoint with unsent attempts
 * (a skip scan of the open attempts' index), however many attempts wait.
 */
export async function wakeForgotten(pool: Pool, dueBefore: Date): Promise<number> {
  const { rowCount } = await pool.query(
    `WITH RECURSIVE e(endpoint_id, due) AS (
       (SELECT endpoint_id, scheduled_at FROM attempts WHERE status = 'pending' AND sent_at IS NULL
        ORDER BY endpoint_id, scheduled_at LIMIT 1)
       UNION ALL
       SELECT n.endpoint_id, n.scheduled_at FROM e CROSS JOIN LATERAL (
         SELECT endpoint_id, scheduled_at FROM attempts
         WHERE status = 'pending' AND sent_at IS NULL AND endpoint_id > e.endpoint_id
         ORDER BY endpoint_id, scheduled_at LIMIT 1) n)
     INSERT INTO endpoint_flows (endpoint_id, next_release_at)
     SELECT endpoint_id, now() FROM e WHERE due < $1 ORDER BY endpoint_id
     ON CONFLICT (endpoint_id) DO UPDATE SET next_release_at = now() WHERE endpoint_flows.next_release_at IS NULL`,
    [dueBefore],
  );
  return rowCount ?? 0;
}

/**
 * The sweeper's recount of what is in flight, for endpoints whose count says some are: an
 * attempt removed while in flight (its delivery ended by the sweeper's check) would otherwise
 * hold a slot for good. The flows are locked first and counted after, so a release or a result
 * committed meanwhile is counted exactly once. Counted at the head of each endpoint's open
 * attempts (`HEAD_OF_OPEN`), where the gate's releases are, and only ever lowered.
 */
export async function recountInFlight(pool: Pool): Promise<number> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ endpoint_id: string }>(
      `SELECT endpoint_id FROM endpoint_flows WHERE in_flight > 0
       ORDER BY endpoint_id FOR NO KEY UPDATE SKIP LOCKED`,
    );
    if (!rows.length) return 0;
    const { rowCount } = await tx.query(
      `UPDATE endpoint_flows t SET in_flight = c.n FROM (
         SELECT f.endpoint_id, (SELECT count(*)::int FROM (${HEAD_OF_OPEN}) h WHERE h.sent_at IS NOT NULL) AS n
         FROM endpoint_flows f WHERE f.endpoint_id = ANY($1)) c
       WHERE t.endpoint_id = c.endpoint_id AND c.n < t.in_flight`,
      [rows.map((r) => r.endpoint_id)],
    );
    return rowCount ?? 0;
  });
}
