import type { Received } from "@herald/broker";
import { context, trace } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { recordResult } from "./results.ts";

/**
 * `attempt.completed.v1`, a batch at a time. Successes, nearly all results under load, are
 * recorded together: one statement for the batch. Failures each take the full path of
 * `recordResult` (retry schedule, endpoint disabling).
 *
 * Idempotent by the same conditional update as one at a time: only attempts still `pending`
 * are recorded, so a redelivered result changes nothing.
 */
type Recorded = {
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  app_id: string;
  attempt_number: number;
  completed_at: Date;
  event_created_at: Date;
};

export async function recordResults(
  deps: DispatcherDeps,
  messages: Received<"attempt.completed.v1">[],
): Promise<void> {
  const successes = messages
    .filter((m) => m.body.succeeded)
    .sort((a, b) => (a.body.delivery_id < b.body.delivery_id ? -1 : 1));
  if (successes.length) await recordSuccesses(deps, successes);
  for (const m of messages) {
    if (!m.body.succeeded) await context.with(m.context, () => recordResult(deps, m.body));
  }
}

async function recordSuccesses(
  deps: DispatcherDeps,
  messages: Received<"attempt.completed.v1">[],
): Promise<void> {
  const bodies = messages.map((m) => m.body);
  // One statement, atomic: the attempts, their deliveries, and the endpoints' failure clocks
  // (a success resets it).
  const { rows: recorded } = await deps.pool.query<Recorded>(
    `WITH r AS (
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::text[])
         AS r(id, response_status, response_body, duration_ms, trace_id, completed_at, request_headers)),
     a AS (
       UPDATE attempts a SET status = 'succeeded', response_status = r.response_status, response_body = r.response_body,
              error = NULL, duration_ms = r.duration_ms, trace_id = r.trace_id, completed_at = r.completed_at,
              request_headers = r.request_headers::jsonb
       FROM r WHERE a.id = r.id AND a.status = 'pending'
       RETURNING a.delivery_id, a.endpoint_id, a.event_id, a.app_id, a.attempt_number, r.completed_at),
     e AS (
       UPDATE endpoints SET failing_since = NULL
       WHERE id IN (SELECT endpoint_id FROM a) AND failing_since IS NOT NULL)
     UPDATE deliveries d SET status = 'succeeded', attempts = d.attempts + 1, last_attempt_at = a.completed_at,
            next_attempt_at = NULL, updated_at = now()
     FROM a WHERE d.id = a.delivery_id
     RETURNING a.delivery_id, a.endpoint_id, a.event_id, a.app_id, a.attempt_number, a.completed_at,
               (SELECT ev.created_at FROM events ev WHERE ev.id = a.event_id) AS event_created_at`,
    [
      bodies.map((b) => b.attempt_id),
      bodies.map((b) => b.response_status),
      bodies.map((b) => b.response_body),
      bodies.map((b) => b.duration_ms),
      bodies.map((b) => b.trace_id),
      bodies.map((b) => b.completed_at),
      bodies.map((b) => (b.request_headers ? JSON.stringify(b.request_headers) : null)),
    ],
  );
  const byDelivery = new Map(recorded.map((r) => [r.delivery_id, r]));
  for (const m of messages) {
    const r = byDelivery.get(m.body.delivery_id);
    if (!r) continue;
    trace.getSpan(m.context)?.setAttributes({
      "herald.event_id": r.event_id,
      "herald.endpoint_id": r.endpoint_id,
      "herald.app_id": r.app_id,
      "herald.attempt_number": r.attempt_number,
      "herald.delivery_status": "succeeded",
    });
    deps.metrics.deliveryDelay.observe((r.completed_at.getTime() - r.event_created_at.getTime()) / 1000);
    context.with(m.context, () =>
      deps.logger.debug(
        { event: r.event_id, endpoint: r.endpoint_id, attempt: r.attempt_number, status: "succeeded" },
        "delivery succeeded",
      ),
    );
  }
  deps.metrics.deliveries.inc({ status: "succeeded" }, recorded.length);
}
