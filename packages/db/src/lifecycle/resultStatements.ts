import type { DeliveryStatus } from "@herald/contracts/statuses";
import type { StagedMessage } from "../outbox/index.ts";
import { ASYNC_COMMIT, type Pool, prepared } from "../pool.ts";
import { storable, storableTextOrNull } from "../text.ts";
import { requestColumns, writeWithFailures } from "./failedResults.ts";
import { type FlowChange, releasedByResults } from "./flow.ts";
import { flowNotice, stageNotices } from "./operational.ts";
import type { RetryPolicy } from "./retryPolicy.ts";

/*
 * The results' statements (`writeResults`): a batch of successes in one statement here, a batch
 * with failures in one transaction in failedResults.ts, which asks retryPolicy.ts what follows each.
 * The stage that runs them is the dispatcher's recordResults.ts.
 */

/** What a sender reported of one attempt. */
export type AttemptResult = {
  attemptId: string;
  deliveryId: string;
  /** The attempt's event, where its rows are; null from senders that did not say (looked up). */
  eventId: string | null;
  succeeded: boolean;
  responseStatus: number | null;
  /** Any text the receiver answered: made storable here (NUL and unpaired surrogates replaced). */
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  retryAfterMs: number | null;
  traceId: string | null;
  completedAt: Date;
  requestHeaders: Record<string, string> | null;
  /**
   * The endpoint's transformation cancelled the delivery: no request was made (`succeeded`
   * false, `error` null). The attempt and the delivery end `cancelled`.
   */
  cancelled?: boolean;
  /**
   * The request a transformation made in place of Herald's: its method and URL (an HTTP
   * endpoint's) and its body as sent, cut short; absent or null: Herald's own.
   */
  requestMethod?: string | null;
  requestUrl?: string | null;
  requestBody?: string | null;
};

/** What a batch of results did: each result, the endpoints paused or resumed, and those to release more of. */
export type RecordedBatch = {
  recorded: Recorded[];
  changes: FlowChange[];
  /** Endpoints with attempts held by their in-flight limit or their order: these results made room. */
  release: string[];
  /** Operational events these results made (operational.ts): publish after the commit. */
  staged: StagedMessage[];
};

/** What one recorded result did. */
export type Recorded = {
  attemptId: string;
  deliveryId: string;
  eventId: string;
  endpointId: string;
  appId: string;
  attemptNumber: number;
  /** The delivery's status after this result. */
  status: DeliveryStatus;
  /** Milliseconds from the event's acceptance to this, its delivery's first success. */
  firstSuccessAfterMs: number | null;
  /** The next attempt, when one was scheduled: publish `retry.due.v1` after `delayMs`. */
  retry: { attemptId: string; delayMs: number } | null;
  /** Set when this result disabled the endpoint. */
  disabledReason: string | null;
};

/**
 * `attempt.completed.v1`, a batch at a time: records each attempt still `pending` and what
 * follows from it, atomically, under the one locking rule (locks.ts: deliveries first, in id
 * order). A batch with failures is one transaction that decides each result's next step in
 * the order they happened (failedResults.ts); a batch of successes only, nearly every batch under
 * load, is one statement.
 *
 * Idempotent by the conditional update `attempts.status = 'pending'`: a result recorded once
 * is not recorded again, and what follows from it is decided once.
 */
export async function writeResults(
  pool: Pool,
  results: AttemptResult[],
  policy: RetryPolicy,
): Promise<RecordedBatch> {
  const unique = [...new Map(results.map((r) => [r.attemptId, r])).values()];
  if (!unique.length) return { recorded: [], changes: [], release: [], staged: [] };
  const located = await locate(pool, unique);
  return located.every((r) => r.succeeded)
    ? writeSuccesses(pool, located)
    : writeWithFailures(pool, located, policy);
}

/** A result whose event is known: its rows are looked for in that event's partitions only. */
export type LocatedResult = AttemptResult & { eventId: string };

/**
 * Results from senders that did not say their event (before `attempts.completed.v1`) get it
 * from their attempt; one lookup through every partition, for those only. A result whose
 * attempt is gone is left out: there is nothing to record it on.
 */
async function locate(pool: Pool, results: AttemptResult[]): Promise<LocatedResult[]> {
  const unknown = results.filter((r) => r.eventId === null).map((r) => r.attemptId);
  if (!unknown.length) return results as LocatedResult[];
  const { rows } = await pool.query<{ id: string; event_id: string }>(
    "SELECT id, event_id FROM attempts WHERE id = ANY($1::text[])",
    [unknown],
  );
  const events = new Map(rows.map((r) => [r.id, r.event_id]));
  return results.flatMap((r) => {
    const eventId = r.eventId ?? events.get(r.attemptId);
    return eventId ? [{ ...r, eventId }] : [];
  });
}

type SuccessRow = {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  app_id: string;
  attempt_number: number;
  was: DeliveryStatus;
  completed_at: Date;
  event_created_at: Date;
  /** The flows this batch answered, on every row. */
  flows: { endpoint_id: string; resumed: boolean; held_by: string | null }[];
};

const RECORD_SUCCESSES = prepared(
  "record-successes",
  `WITH r AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::text[], $7::timestamptz[], $8::text[], $9::text[],
                            $10::text[], $11::text[], $12::text[])
         AS r(id, delivery_id, response_status, response_body, duration_ms, trace_id, completed_at, request_headers, event_id,
              request_method, request_url, request_body)
       -- Committed without waiting for the WAL's flush (pool.ts): a result a crash forgets
       -- leaves its attempt in flight, and the sweeper sends it again (at least once).
       WHERE ${ASYNC_COMMIT}),
     locked AS MATERIALIZED (
       SELECT d.id, d.status FROM deliveries d WHERE d.id = ANY($2::text[]) AND d.event_id = ANY($9::text[])
       ORDER BY d.id FOR NO KEY UPDATE),
     a AS (
       UPDATE attempts a SET status = 'succeeded', response_status = r.response_status, response_body = r.response_body,
              error = NULL, duration_ms = r.duration_ms, trace_id = r.trace_id, completed_at = r.completed_at,
              request_headers = COALESCE(r.request_headers::jsonb, a.request_headers),
              request_method = r.request_method, request_url = r.request_url, request_body = r.request_body
       FROM r JOIN locked ON locked.id = r.delivery_id
       WHERE a.id = r.id AND a.delivery_id = r.delivery_id AND a.event_id = r.event_id AND a.event_id = ANY($9::text[])
         AND a.status = 'pending'
       RETURNING a.id, a.delivery_id, a.endpoint_id, a.event_id, a.app_id, a.attempt_number, r.completed_at, locked.status AS was),
     n AS (SELECT endpoint_id, count(*)::int AS n, max(completed_at) AS at FROM a GROUP BY endpoint_id),
     clock AS (
       UPDATE endpoints SET failing_since = NULL WHERE id IN (
         SELECT ep.id FROM endpoints ep JOIN n ON n.endpoint_id = ep.id
         WHERE ep.failing_since <= n.at ORDER BY ep.id FOR NO KEY UPDATE OF ep)
       RETURNING id),
     d AS (
       UPDATE deliveries d SET status = 'succeeded', attempts = d.attempts + 1,
              last_attempt_at = GREATEST(d.last_attempt_at, a.completed_at), next_attempt_at = NULL, updated_at = now()
       FROM a WHERE d.id = a.delivery_id AND d.event_id = a.event_id AND d.event_id = ANY($9::text[])),
     -- The flows last (locks.ts): their InitPlan on clock runs it, and the endpoints' locks, first.
     old AS MATERIALIZED (
       SELECT f.endpoint_id, f.pause_reason, n.n FROM endpoint_flows f JOIN n ON n.endpoint_id = f.endpoint_id
       WHERE (SELECT count(*) FROM clock) >= 0
       ORDER BY f.endpoint_id FOR NO KEY UPDATE OF f),
     fl AS (
       UPDATE endpoint_flows f SET in_flight = GREATEST(0, f.in_flight - old.n), failures = 0, probe_attempt_id = NULL,
              pause_reason = CASE WHEN old.pause_reason = 'not_responding' THEN NULL ELSE f.pause_reason END,
              paused_until = CASE WHEN old.pause_reason = 'not_responding' THEN NULL ELSE f.paused_until END,
              opens = CASE WHEN old.pause_reason = 'not_responding' THEN 0 ELSE f.opens END,
              next_release_at = CASE WHEN old.pause_reason = 'not_responding' AND f.next_release_at IS NOT NULL
                                     THEN now() ELSE f.next_release_at END
       FROM old WHERE f.endpoint_id = old.endpoint_id
       RETURNING f.endpoint_id, old.pause_reason IS NOT DISTINCT FROM 'not_responding' AS resumed, f.held_by)
     SELECT a.*, ev.created_at AS event_created_at, (SELECT json_agg(fl) FROM fl) AS flows
     FROM a JOIN events ev ON ev.id = a.event_id AND ev.id = ANY($9::text[])`,
);

/**
 * Successful attempts only, nearly every batch under load: one statement, committed alone.
 * `locked` takes the deliveries' locks in id order before their attempts are touched; the
 * endpoints whose clock stops are locked in id order too (a clock started after the success is
 * left running); the flows come last (`old`, `fl`): their attempts no longer in flight, a run of
 * unreachable attempts ended, an open breaker closed (flow.ts). In the results' statement, so
 * the sweeper's recount (release.ts) sees both or neither, and the flow's lock is held from its
 * update to the commit only (fan-out's fast path waits on it).
 *
 * An endpoint it resumed is announced (operational.ts) by a statement of its own just after:
 * rare, and not worth a transaction's two more round trips on every batch.
 */
async function writeSuccesses(pool: Pool, successes: LocatedResult[]): Promise<RecordedBatch> {
  const { rows } = await pool.query<SuccessRow>(
    RECORD_SUCCESSES([
      successes.map((r) => r.attemptId),
      successes.map((r) => r.deliveryId),
      successes.map((r) => r.responseStatus),
      successes.map((r) => storableTextOrNull(r.responseBody)),
      successes.map((r) => r.durationMs),
      successes.map((r) => storableTextOrNull(r.traceId)),
      successes.map((r) => r.completedAt),
      successes.map((r) => (r.requestHeaders ? JSON.stringify(storable(r.requestHeaders)) : null)),
      successes.map((r) => r.eventId),
      ...requestColumns(successes),
    ]),
  );
  const recorded: Recorded[] = rows.map((r) => ({
    attemptId: r.id,
    deliveryId: r.delivery_id,
    eventId: r.event_id,
    endpointId: r.endpoint_id,
    appId: r.app_id,
    attemptNumber: r.attempt_number,
    status: "succeeded",
    firstSuccessAfterMs:
      r.was === "succeeded" ? null : r.completed_at.getTime() - r.event_created_at.getTime(),
    retry: null,
    disabledReason: null,
  }));
  const flows = rows[0]?.flows ?? [];
  const changes: FlowChange[] = flows
    .filter((f) => f.resumed)
    .map((f) => ({ endpointId: f.endpoint_id, change: "resumed", reason: null, until: null }));
  const release = flows.filter((f) => releasedByResults(f.held_by)).map((f) => f.endpoint_id);
  const answeredAt = new Map(rows.map((r) => [r.endpoint_id, r.completed_at]));
  const notices = changes.flatMap((c) => flowNotice(c, answeredAt.get(c.endpointId)!) ?? []);
  return { recorded, changes, release, staged: await stageNotices(pool, notices) };
}
