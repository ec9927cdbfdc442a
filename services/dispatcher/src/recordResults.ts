import { handleItems, type Item, type ReceivedOf } from "@herald/broker";
import type { AttemptCompletedV1, AttemptsCompletedV1 } from "@herald/contracts";
import { nextDelay, type RetryPolicy, writeResults } from "@herald/db/lifecycle";
import { context, trace } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { publishStaged } from "./publishStaged.ts";
import { releaseAttempts } from "./releaseAttempts.ts";

/**
 * Stage 3, `attempts.completed.v1` (and `attempt.completed.v1`), a batch at a time: records each attempt's outcome and
 * decides what follows, successes and failures alike, atomically for the batch (the
 * lifecycle's `writeResults`, in resultStatements.ts): a success ends the delivery; a failure schedules the next attempt on the
 * retry schedule or, when it ran out or the endpoint has failed for ENDPOINT_DISABLE_AFTER
 * (which disables it), ends the delivery as `failed`. Each retry is then published to the
 * delay queue of its wait; when that runs out, stage 4 (sendDue.ts) takes it.
 *
 * Redelivery is harmless by the conditional update `attempts.status = 'pending'`: a result
 * recorded once changes nothing the second time, and schedules no second retry. Should a retry's
 * publish below fail after the commit, the sweeper finds that attempt once it is overdue.
 *
 * Results also move the endpoint's flow (the lifecycle's flow.ts): unreachable attempts in a
 * row pause it (the circuit breaker), any answer resumes it, a Retry-After pauses it, a 429,
 * 502 or 504 without one slows it down; each change is logged and counted.
 *
 * Senders report several results a message (`attempts.completed.v1`; older ones one, as
 * `attempt.completed.v1`): each is recorded in a span of its own under its attempt's trace, and
 * one result the database refuses does not hold back the others in its message (handleItems).
 */
export async function recordResults(
  deps: DispatcherDeps,
  messages: ReceivedOf<"attempts.completed.v1" | "attempt.completed.v1">[],
): Promise<void> {
  await handleItems<AttemptCompletedV1>(
    messages,
    "attempt.completed.v1",
    // In the order they happened: recorded one by one, an older failure must not come last.
    (m) =>
      m.name === "attempts.completed.v1"
        ? [...(m.body as AttemptsCompletedV1).results].sort(
            (a, b) => Date.parse(a.completed_at) - Date.parse(b.completed_at),
          )
        : null,
    (items) => recordItems(deps, items),
    (err) => deps.broker.isTransient(err),
  );
}

async function recordItems(deps: DispatcherDeps, items: Item<AttemptCompletedV1>[]): Promise<void> {
  const { config, metrics, logger, broker } = deps;
  const policy: RetryPolicy = {
    nextDelay: (attemptNumber, retryAfterMs) => nextDelay(config.retrySchedule, attemptNumber, retryAfterMs),
    disableAfterMs: config.endpointDisableAfterMs,
    flow: config.flow,
  };
  const { recorded, changes, release, staged } = await writeResults(
    deps.db,
    items.map(({ body: b }) => ({
      attemptId: b.attempt_id,
      deliveryId: b.delivery_id,
      eventId: b.event_id || null,
      succeeded: b.succeeded,
      responseStatus: b.response_status,
      responseBody: b.response_body,
      error: b.error,
      durationMs: b.duration_ms,
      retryAfterMs: b.retry_after_ms,
      traceId: b.trace_id,
      completedAt: new Date(b.completed_at),
      requestHeaders: b.request_headers ?? null,
      cancelled: b.cancelled === true,
      requestMethod: b.request_method ?? null,
      requestUrl: b.request_url ?? null,
      requestBody: b.request_body ?? null,
    })),
    policy,
  );
  const contexts = new Map(items.map((m) => [m.body.attempt_id, m.context]));
  for (const r of recorded) {
    const ctx = contexts.get(r.attemptId) ?? context.active();
    trace.getSpan(ctx)?.setAttributes({
      "herald.event_id": r.eventId,
      "herald.endpoint_id": r.endpointId,
      "herald.app_id": r.appId,
      "herald.attempt_number": r.attemptNumber,
      "herald.delivery_status": r.status,
    });
    metrics.deliveries.inc({ status: r.status });
    if (r.firstSuccessAfterMs !== null) metrics.deliveryDelay.observe(r.firstSuccessAfterMs / 1000);
    const line = {
      event: r.eventId,
      endpoint: r.endpointId,
      attempt: r.attemptNumber,
      status: r.status,
      ...(r.retry ? { retryInMs: r.retry.delayMs } : {}),
    };
    context.with(ctx, () => {
      if (r.status === "succeeded") logger.debug(line, "delivery succeeded");
      else logger.info(line, `delivery ${r.status}`);
      if (r.disabledReason) logger.warn({ endpoint: r.endpointId }, r.disabledReason);
    });
  }
  for (const c of changes) {
    metrics.flowChanges.inc({ change: c.change, reason: c.reason ?? "none" });
    const line = { endpoint: c.endpointId, reason: c.reason, until: c.until?.toISOString() };
    if (c.change === "paused") logger.warn(line, "endpoint paused: its attempts are held until then");
    else if (c.change === "resumed") logger.info(line, "endpoint answering again: held attempts resume");
    else logger.info(line, "endpoint slowed down: fewer attempts in flight until then");
  }
  await publishStaged(deps, staged);
  // Room was made where attempts wait for it: the next go now, not at the gate's next poll.
  await releaseAttempts(deps, { endpoints: release });
  // After the commit. Should a publish be lost, the sweeper sends the attempt once overdue.
  await Promise.all(
    recorded
      .filter((r) => r.retry)
      .map((r) =>
        context.with(contexts.get(r.attemptId) ?? context.active(), () => {
          metrics.retriesScheduled.inc();
          return broker.publishToQueue(broker.topology.delayQueue(r.retry!.delayMs), "retry.due.v1", {
            attempt_id: r.retry!.attemptId,
            delivery_id: r.deliveryId,
          });
        }),
      ),
  );
}
