import { inTransaction, type Pool, type PoolClient } from "../pool.ts";
import { type Admission, admit, type EndpointLimits, type Flow, type FlowSettings } from "./flow.ts";
import { type AttemptToSend, SEND_COLUMNS } from "./send.ts";

/**
 * The release gate: the one way an attempt reaches the senders the first time. Attempts wait
 * in each endpoint's queue (pending, `sent_at` null, in the order due) and go out only as
 * far as the endpoint's flow allows (flow.ts): its pause, its in-flight limit, its rate
 * limit. What stays waits in PostgreSQL, not in RabbitMQ, and the endpoint's
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
  EndpointLimits & {
    deleted: boolean;
    disabled: boolean;
  };

/** Attempts of a deleted or disabled endpoint ended a pass. */
const STALE_BATCH = 500;

const FLOW_COLUMNS = `f.endpoint_id, f.tokens, f.tokens_at, f.limit_now, f.slow_until, f.paused_until, f.pause_reason,
  f.failures, f.opens, f.probe_attempt_id, f.held_by, f.next_release_at,
  ep.rate_limit, ep.max_in_flight, ep.deleted_at IS NOT NULL AS deleted, ep.disabled`;

async function lockToRelease(tx: PoolClient, target: ReleaseTarget): Promise<LockedFlow[]> {
  if ("poll" in target) {
    const { rows } = await tx.query<LockedFlow>(
      `SELECT ${FLOW_COLUMNS} FROM endpoint_flows f JOIN endpoints ep ON ep.id = f.endpoint_id
       WHERE f.next_release_at <= now() ORDER BY f.next_release_at LIMIT $1 FOR NO KEY UPDATE OF f SKIP LOCKED`,
      [target.poll],
    );
    return rows;
  }
  const ids = [...new Set(target.endpoints)].sort();
  const select = (list: string[]) =>
    tx.query<LockedFlow>(
      `SELECT ${FLOW_COLUMNS} FROM endpoint_flows f JOIN endpoints ep ON ep.id = f.endpoint_id
       WHERE f.endpoint_id = ANY($1) ORDER BY f.endpoint_id FOR NO KEY UPDATE OF f`,
      [list],
    );
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

type Queue = { endpoint_id: string; in_flight: number; ready: string[] };

/** What each endpoint has in flight, and the head of its queue: up to `peek` attempts due. */
async function readQueues(
  tx: PoolClient,
  flows: { id: string; peek: number }[],
  due: string[],
  now: Date,
): Promise<Map<string, Queue>> {
  const { rows } = await tx.query<Queue>(
    `WITH ready_by AS (
       SELECT GREATEST($4::timestamptz, (SELECT max(scheduled_at) FROM attempts WHERE id = ANY($3::text[]))) AS at)
     SELECT e.id AS endpoint_id,
       (SELECT count(*)::int FROM attempts a
        WHERE a.endpoint_id = e.id AND a.status = 'pending' AND a.sent_at IS NOT NULL) AS in_flight,
       ARRAY(SELECT a.id FROM attempts a, ready_by
             WHERE a.endpoint_id = e.id AND a.status = 'pending' AND a.sent_at IS NULL AND a.scheduled_at <= ready_by.at
             ORDER BY a.scheduled_at, a.id LIMIT e.peek) AS ready
     FROM unnest($1::text[], $2::int[]) AS e(id, peek)`,
    [flows.map((f) => f.id), flows.map((f) => f.peek), due, now],
  );
  return new Map(rows.map((r) => [r.endpoint_id, r]));
}

/** Takes `take` of each endpoint's list in turns: one of each, then the next of each. */
function roundRobin<T>(lists: T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++)
    for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}

export async function release(pool: Pool, target: ReleaseTarget, s: FlowSettings): Promise<Release> {
  return inTransaction(pool, async (tx) => {
    const flows = await lockToRelease(tx, target);
    const empty: Release = { send: [], stale: [], held: [], endpoints: flows.length };
    if (!flows.length) return empty;
    // The time now, after the lock was had: not now(), the transaction's start, which a wait
    // for the lock leaves behind the time another release already wrote.
    const now = (await tx.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now;
    const peekOf = (f: LockedFlow) =>
      f.deleted || f.disabled ? STALE_BATCH : (f.max_in_flight ?? s.maxInFlight) + 1;
    const queues = await readQueues(
      tx,
      flows.map((f) => ({ id: f.endpoint_id, peek: peekOf(f) })),
      "due" in target ? (target.due ?? []) : [],
      now,
    );

    const chosen: string[][] = [];
    const stale: string[] = [];
    const held: Release["held"] = [];
    const probes = new Map<string, string>();
    for (const flow of flows) {
      const queue = queues.get(flow.endpoint_id)!;
      if (flow.deleted || flow.disabled) {
        stale.push(...queue.ready);
        flow.held_by = null;
        flow.next_release_at = queue.ready.length >= STALE_BATCH ? now : null;
        continue;
      }
      const a = admit(flow, flow, queue.in_flight, queue.ready.length, now, s);
      const taken = queue.ready.slice(0, a.take);
      chosen.push(taken);
      if (a.probe) probes.set(flow.endpoint_id, taken[0]!);
      flow.held_by = a.heldBy;
      flow.next_release_at = a.retryAt;
      if (a.heldBy) held.push({ endpointId: flow.endpoint_id, heldBy: a.heldBy });
    }
    for (const [endpointId, attemptId] of probes)
      flows.find((f) => f.endpoint_id === endpointId)!.probe_attempt_id = attemptId;

    const ids = chosen.flat();
    const { rows } = await tx.query<AttemptToSend>(
      `WITH s AS (
         UPDATE attempts a SET sent_at = clock_timestamp() WHERE a.id = ANY($1) AND a.status = 'pending' AND a.sent_at IS NULL
         RETURNING a.*),
       f AS (
         UPDATE endpoint_flows f SET tokens = u.tokens, tokens_at = u.tokens_at, limit_now = u.limit_now,
                slow_until = u.slow_until, paused_until = u.paused_until, pause_reason = u.pause_reason,
                probe_attempt_id = u.probe_attempt_id, held_by = u.held_by, next_release_at = u.next_release_at
         FROM unnest($2::text[], $3::float8[], $4::timestamptz[], $5::int[], $6::timestamptz[], $7::timestamptz[],
                     $8::text[], $9::text[], $10::text[], $11::timestamptz[])
           AS u(endpoint_id, tokens, tokens_at, limit_now, slow_until, paused_until, pause_reason, probe_attempt_id, held_by, next_release_at)
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
      ],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const send = roundRobin(chosen.map((list) => list.flatMap((id) => byId.get(id) ?? [])));
    return { send, stale, held, endpoints: flows.length };
  });
}

/**
 * Puts back attempts released but never handed over (their publish failed): unsent again, and
 * their endpoints looked at again at once. Best effort: what this misses, the sweeper sends
 * once ATTEMPT_DEADLINE has passed.
 */
export async function unrelease(pool: Pool, attemptIds: string[]): Promise<void> {
  if (!attemptIds.length) return;
  await pool.query(
    `WITH a AS (
       UPDATE attempts SET sent_at = NULL WHERE id IN (
         SELECT id FROM attempts WHERE id = ANY($1) AND status = 'pending' ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
       RETURNING endpoint_id)
     UPDATE endpoint_flows SET next_release_at = now()
     WHERE endpoint_id IN (SELECT endpoint_id FROM a)`,
    [attemptIds],
  );
}

/**
 * The sweeper's check that no endpoint has attempts waiting unknown to the gate: each endpoint
 * whose oldest unsent attempt was due before `dueBefore` (a retry whose wake-up message was
 * lost) is looked at now, unless it already is. One step per endpoint with unsent attempts
 * (a skip scan of the queue index), however many attempts wait.
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
