import type { AttemptStatus, DeliveryStatus } from "@herald/contracts/statuses";
import { newId } from "../ids.ts";
import { inTransaction, type Pool } from "../pool.ts";
import { storable, storableTextOrNull } from "../text.ts";
import { afterResult, type Flow, type FlowChange, releasedByResults } from "./flow.ts";
import { lockDeliveries, lockEndpoints, lockFlows } from "./locks.ts";
import { flowNotice, type Notice, stageNotices } from "./operational.ts";
import type { AttemptResult, LocatedResult, Recorded, RecordedBatch } from "./resultStatements.ts";
import { nextStep, type RetryPolicy, type Step } from "./retryPolicy.ts";

type AttemptRow = {
  id: string;
  account_id: string;
  app_id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  attempt_number: number;
};

/**
 * A batch of results with failures among them, in one transaction under the locking rule
 * (locks.ts): the deliveries are locked, the attempts still `pending` recorded, the endpoints
 * whose state may change locked, what follows each result decided (retryPolicy.ts), then written in
 * one statement: the deliveries, the next attempts and the endpoints' failure clocks.
 * Recording an attempt and deciding what follows commit together, so no delivery is left
 * without its next step, and every retry decided is returned to be scheduled.
 */
export async function writeWithFailures(
  pool: Pool,
  results: LocatedResult[],
  policy: RetryPolicy,
): Promise<RecordedBatch> {
  // The batch's events: each statement looks in their partitions only.
  const eventIds = [...new Set(results.map((r) => r.eventId))];
  return inTransaction(pool, async (tx) => {
    const deliveries = await lockDeliveries(
      tx,
      results.map((r) => r.deliveryId),
      eventIds,
    );
    const { rows: attempts } = await tx.query<AttemptRow>(
      `WITH r AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[], $8::timestamptz[], $9::text[], $10::text[], $11::text[],
                              $13::text[], $14::text[], $15::text[])
           AS r(id, delivery_id, response_status, response_body, error, duration_ms, trace_id, completed_at, request_headers, status, event_id,
                request_method, request_url, request_body))
       UPDATE attempts a SET status = r.status, response_status = r.response_status, response_body = r.response_body,
              error = r.error, duration_ms = r.duration_ms, trace_id = r.trace_id, completed_at = r.completed_at,
              request_headers = COALESCE(r.request_headers::jsonb, a.request_headers),
              request_method = r.request_method, request_url = r.request_url, request_body = r.request_body
       FROM r WHERE a.id = r.id AND a.delivery_id = r.delivery_id AND a.event_id = r.event_id
         AND a.event_id = ANY($12::text[]) AND a.status = 'pending'
       RETURNING a.id, a.account_id, a.app_id, a.delivery_id, a.event_id, a.endpoint_id, a.attempt_number`,
      [
        results.map((r) => r.attemptId),
        results.map((r) => r.deliveryId),
        results.map((r) => r.responseStatus),
        results.map((r) => storableTextOrNull(r.responseBody)),
        results.map((r) => storableTextOrNull(r.error)),
        results.map((r) => r.durationMs),
        results.map((r) => storableTextOrNull(r.traceId)),
        results.map((r) => r.completedAt),
        results.map((r) => (r.requestHeaders ? JSON.stringify(storable(r.requestHeaders)) : null)),
        results.map(attemptStatus),
        results.map((r) => r.eventId),
        eventIds,
        ...requestColumns(results),
      ],
    );
    if (!attempts.length) return { recorded: [], changes: [], release: [], staged: [] };
    const byId = new Map(results.map((r) => [r.attemptId, r]));
    const ordered = attempts
      .map((attempt) => ({ attempt, result: byId.get(attempt.id)! }))
      .sort((a, b) => a.result.completedAt.getTime() - b.result.completedAt.getTime());
    const endpoints = await lockEndpoints(
      tx,
      [...new Set(ordered.map((o) => o.attempt.endpoint_id))],
      ordered.filter((o) => !o.result.succeeded).map((o) => o.attempt.endpoint_id),
    );
    const clocks = new Map([...endpoints].map(([id, e]) => [id, { ...e }]));
    const flows = await lockFlows(tx, [...new Set(ordered.map((o) => o.attempt.endpoint_id))]);
    const flowsBefore = new Map([...flows].map(([id, f]) => [id, JSON.stringify(f)]));
    const changes: FlowChange[] = [];
    const notices: Notice[] = [];

    const recorded: Recorded[] = [];
    const next: { attempt: AttemptRow; id: string; scheduledAt: Date; url: string }[] = [];
    const settled: { id: string; status: DeliveryStatus; lastAttemptAt: Date; nextAttemptAt: Date | null }[] =
      [];
    for (const { attempt, result } of ordered) {
      const delivery = deliveries.get(attempt.delivery_id)!;
      const endpoint = clocks.get(attempt.endpoint_id);
      const step = nextStep({
        result,
        attemptNumber: attempt.attempt_number,
        deliveryStatus: delivery.status,
        endpoint,
        policy,
      });
      // The endpoint's next results in this batch see what this one did to it.
      if (endpoint && step.endpoint) clocks.set(attempt.endpoint_id, { ...endpoint, ...step.endpoint });
      const nextAttemptAt = step.retryDelayMs === null ? null : new Date(Date.now() + step.retryDelayMs);
      const flow = flows.get(attempt.endpoint_id)!;
      flow.in_flight = Math.max(0, flow.in_flight - 1);
      const change = afterResult(
        flow,
        result,
        { rate_limit: null, max_in_flight: endpoint?.max_in_flight ?? null },
        policy.flow,
      );
      if (change) changes.push(change);
      notices.push(...noticesOf(step, change, attempt, result));
      // Held attempts of an endpoint just disabled are ended by the gate, now.
      if (step.disabledReason && flow.next_release_at) flow.next_release_at = result.completedAt;
      const retryId = step.retryDelayMs === null ? null : newId("attempt");
      if (retryId && nextAttemptAt)
        next.push({ attempt, id: retryId, scheduledAt: nextAttemptAt, url: endpoint!.url });
      settled.push({
        id: delivery.id,
        status: step.status,
        lastAttemptAt: result.completedAt,
        nextAttemptAt,
      });
      recorded.push({
        attemptId: attempt.id,
        deliveryId: delivery.id,
        eventId: attempt.event_id,
        endpointId: attempt.endpoint_id,
        appId: attempt.app_id,
        attemptNumber: attempt.attempt_number,
        status: step.status,
        firstSuccessAfterMs:
          result.succeeded && delivery.status !== "succeeded"
            ? result.completedAt.getTime() - delivery.event_created_at.getTime()
            : null,
        retry: retryId ? { attemptId: retryId, delayMs: step.retryDelayMs! } : null,
        disabledReason: step.disabledReason,
      });
      delivery.status = step.status;
    }
    const changed = [...clocks.values()].filter((e) => {
      const before = endpoints.get(e.id)!;
      return before.failing_since?.getTime() !== e.failing_since?.getTime() || before.disabled !== e.disabled;
    });
    const reasons = new Map(
      recorded.filter((r) => r.disabledReason).map((r) => [r.endpointId, r.disabledReason!]),
    );
    await tx.query(
      `WITH s AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[])
           AS s(id, status, last_attempt_at, next_attempt_at)),
       d AS (
         UPDATE deliveries d SET status = s.status, attempts = d.attempts + 1,
                last_attempt_at = GREATEST(d.last_attempt_at, s.last_attempt_at),
                next_attempt_at = s.next_attempt_at, updated_at = now()
         FROM s WHERE d.id = s.id AND d.event_id = ANY($28::text[])),
       n AS (
         INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, created_at)
         SELECT id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, 'pending', url, scheduled_at, now()
         FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::timestamptz[])
           AS n(id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, url, scheduled_at)
         ON CONFLICT (delivery_id, attempt_number, event_id) DO NOTHING),
       f AS (
         INSERT INTO endpoint_flows (endpoint_id, limit_now, slow_until, paused_until, pause_reason, failures, opens, probe_attempt_id, next_release_at, in_flight)
         SELECT * FROM unnest($18::text[], $19::int[], $20::timestamptz[], $21::timestamptz[], $22::text[], $23::int[], $24::int[], $25::text[], $26::timestamptz[], $27::int[])
         ON CONFLICT (endpoint_id) DO UPDATE SET in_flight = excluded.in_flight, limit_now = excluded.limit_now, slow_until = excluded.slow_until,
           paused_until = excluded.paused_until, pause_reason = excluded.pause_reason, failures = excluded.failures,
           opens = excluded.opens, probe_attempt_id = excluded.probe_attempt_id, next_release_at = excluded.next_release_at)
       UPDATE endpoints e SET failing_since = c.failing_since,
              disabled = e.disabled OR c.disabled,
              disabled_reason = COALESCE(c.reason, e.disabled_reason),
              updated_at = CASE WHEN c.disabled AND NOT e.disabled THEN now() ELSE e.updated_at END
       FROM unnest($14::text[], $15::timestamptz[], $16::boolean[], $17::text[]) AS c(id, failing_since, disabled, reason)
       WHERE e.id = c.id`,
      [
        settled.map((s) => s.id),
        settled.map((s) => s.status),
        settled.map((s) => s.lastAttemptAt),
        settled.map((s) => s.nextAttemptAt),
        next.map((n) => n.id),
        next.map((n) => n.attempt.account_id),
        next.map((n) => n.attempt.app_id),
        next.map((n) => n.attempt.delivery_id),
        next.map((n) => n.attempt.event_id),
        next.map((n) => n.attempt.endpoint_id),
        next.map((n) => n.attempt.attempt_number + 1),
        next.map((n) => n.url),
        next.map((n) => n.scheduledAt),
        changed.map((e) => e.id),
        changed.map((e) => e.failing_since),
        changed.map((e) => e.disabled),
        changed.map((e) => reasons.get(e.id) ?? null),
        ...flowColumns(
          [...flows.values()].filter((f) => JSON.stringify(f) !== flowsBefore.get(f.endpoint_id)),
        ),
        eventIds,
      ],
    );
    const release = [...flows.values()].filter((f) => releasedByResults(f.held_by)).map((f) => f.endpoint_id);
    return { recorded, changes, release, staged: await stageNotices(tx, notices) };
  });
}

/** The attempt's status a result gives it: a cancelled one made no request, and failed nothing. */
function attemptStatus(r: AttemptResult): AttemptStatus {
  if (r.succeeded) return "succeeded";
  return r.cancelled ? "cancelled" : "failed";
}

/** What the account's operational endpoints are told of one result (operational.ts). */
function noticesOf(
  step: Step,
  change: FlowChange | null,
  attempt: AttemptRow,
  result: AttemptResult,
): Notice[] {
  const at = result.completedAt.toISOString();
  const notices: Notice[] = [];
  const endpointId = attempt.endpoint_id;
  if (step.disabledReason)
    notices.push({
      type: "endpoint.disabled",
      endpointId,
      data: { trigger: "automatic", reason: step.disabledReason, disabled_at: at },
    });
  const paused = change && flowNotice(change, result.completedAt);
  if (paused) notices.push(paused);
  if (step.exhausted)
    notices.push({
      type: "delivery.exhausted",
      endpointId,
      eventId: attempt.event_id,
      data: {
        delivery: attempt.delivery_id,
        attempts: attempt.attempt_number,
        last_attempt: { id: attempt.id, response_status: result.responseStatus, error: result.error },
        failed_at: at,
      },
    });
  return notices;
}

/** The columns a result may change of each flow, in the order of the statement above. */
function flowColumns(flows: Flow[]): unknown[][] {
  return [
    flows.map((f) => f.endpoint_id),
    flows.map((f) => f.limit_now),
    flows.map((f) => f.slow_until),
    flows.map((f) => f.paused_until),
    flows.map((f) => f.pause_reason),
    flows.map((f) => f.failures),
    flows.map((f) => f.opens),
    flows.map((f) => f.probe_attempt_id),
    flows.map((f) => f.next_release_at),
    flows.map((f) => f.in_flight),
  ];
}

/** The request each result's transformation made (method, URL, body), as three columns; null: Herald's own. */
export function requestColumns(results: AttemptResult[]): (string | null)[][] {
  return [
    results.map((r) => storableTextOrNull(r.requestMethod ?? null)),
    results.map((r) => storableTextOrNull(r.requestUrl ?? null)),
    results.map((r) => storableTextOrNull(r.requestBody ?? null)),
  ];
}
