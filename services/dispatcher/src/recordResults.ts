import type { ReceivedOf } from "@herald/broker";
import type { AttemptCompletedV1 } from "@herald/contracts";
import { isTransientDbError } from "@herald/db/errors";
import { type RetryPolicy, recordResults as record } from "@herald/db/lifecycle";
import {
  type Context,
  context,
  contextFrom,
  type Span,
  SpanStatusCode,
  trace,
  tracer,
} from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { releaseAttempts } from "./releaseAttempts.ts";
import { nextDelay } from "./retryPolicy.ts";

/**
 * Stage 3, `attempts.completed.v1` (and `attempt.completed.v1`), a batch at a time: records each attempt's outcome and
 * decides what follows, successes and failures alike, atomically for the batch (the
 * lifecycle's `recordResults`): a success ends the delivery; a failure schedules the next attempt on the
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
 */
/** One result in hand: its body and the context its record continues. */
type Item = { body: AttemptCompletedV1; context: Context };

/**
 * The results in a batch of messages: `attempts.completed.v1` carries several, each recorded
 * in a span of its own under the sender's span of its attempt (its `traceparent`), linked to
 * the message's; `attempt.completed.v1` (senders before it) carries one, recorded in the
 * message's span.
 */
function resultsOf(messages: ReceivedOf<"attempts.completed.v1" | "attempt.completed.v1">[]): {
  items: Item[];
  spans: Span[];
} {
  const items: Item[] = [];
  const spans: Span[] = [];
  for (const m of messages) {
    if (m.name === "attempt.completed.v1") {
      items.push({ body: m.body, context: m.context });
      continue;
    }
    const message = trace.getSpanContext(m.context);
    for (const body of m.body.results) {
      const parent = body.traceparent ? contextFrom({ traceparent: body.traceparent }) : m.context;
      const span = tracer().startSpan(
        "record attempt result",
        { links: message ? [{ context: message }] : [] },
        parent,
      );
      spans.push(span);
      items.push({ body, context: trace.setSpan(parent, span) });
    }
  }
  return { items, spans };
}

export async function recordResults(
  deps: DispatcherDeps,
  messages: ReceivedOf<"attempts.completed.v1" | "attempt.completed.v1">[],
): Promise<void> {
  const { items, spans } = resultsOf(messages);
  try {
    await recordEach(deps, items);
  } catch (err) {
    for (const span of spans) span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    for (const span of spans) span.end();
  }
}

/**
 * The batch in one go; should the database refuse it (not a transient failure), each result on
 * its own, so that one bad result does not hold back the others sent in its message: they are
 * recorded, and the refusal is thrown for the consumer to retry and, in the end, dead-letter
 * the message (recording is idempotent, so those already recorded are not recorded twice).
 */
async function recordEach(deps: DispatcherDeps, items: Item[]): Promise<void> {
  try {
    await recordItems(deps, items);
  } catch (err) {
    if (items.length < 2 || isTransientDbError(err)) throw err;
    let refused: unknown = null;
    for (const item of items) {
      await recordItems(deps, [item]).catch((e: unknown) => {
        if (isTransientDbError(e)) throw e;
        refused ??= e;
      });
    }
    if (refused) throw refused;
  }
}

async function recordItems(deps: DispatcherDeps, items: Item[]): Promise<void> {
  const { config, metrics, logger, broker } = deps;
  const policy: RetryPolicy = {
    nextDelay: (attemptNumber, retryAfterMs) => nextDelay(config.retrySchedule, attemptNumber, retryAfterMs),
    disableAfterMs: config.endpointDisableAfterMs,
    flow: config.flow,
  };
  const { recorded, changes, release } = await record(
    deps.db,
    items.map(({ body: b }) => ({
      attemptId: b.attempt_id,
      deliveryId: b.delivery_id,
      eventId: b.event_id ?? null,
      succeeded: b.succeeded,
      responseStatus: b.response_status,
      responseBody: b.response_body,
      error: b.error,
      durationMs: b.duration_ms,
      retryAfterMs: b.retry_after_ms,
      traceId: b.trace_id,
      completedAt: new Date(b.completed_at),
      requestHeaders: b.request_headers ?? null,
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
