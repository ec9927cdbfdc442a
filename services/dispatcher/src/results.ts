import type { AttemptCompletedV1 } from "@herald/contracts";
import { newId, type Prisma } from "@herald/db";
import { annotate } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { nextDelay } from "./retries.ts";

type Outcome = {
  /** The delivery's status after this result. */
  status: string;
  retry: { attemptId: string; deliveryId: string; delayMs: number } | null;
  eventId: string;
  endpointId: string;
  appId: string;
  attemptNumber: number;
  /** Seconds from the event's acceptance to this first success. */
  firstSuccessAfter: number | null;
};

function days(ms: number): string {
  const d = ms / 86_400_000;
  return d >= 1 ? `${+d.toFixed(1)} days` : `${Math.round(ms / 1000)} s`;
}

/**
 * `attempt.completed.v1`: records the attempt's outcome and decides what follows: success
 * ends the delivery; a failure schedules the next attempt on the retry schedule (through a
 * delay queue) or, when the schedule ran out or the endpoint has failed for
 * ENDPOINT_DISABLE_AFTER (which disables it), ends the delivery as `failed`.
 *
 * Idempotent by the conditional update `attempt.status = 'pending'`: a redelivered or
 * duplicate result finds the attempt already completed and changes nothing. The delivery row
 * is locked first, so a concurrent endpoint deletion and this result apply one after the other.
 */
export async function recordResult(deps: DispatcherDeps, result: AttemptCompletedV1): Promise<void> {
  const outcome = await deps.prisma.$transaction((tx) => apply(deps, tx, result));
  if (!outcome) return;
  annotate({
    "herald.event_id": outcome.eventId,
    "herald.endpoint_id": outcome.endpointId,
    "herald.app_id": outcome.appId,
    "herald.attempt_number": outcome.attemptNumber,
    "herald.delivery_status": outcome.status,
  });
  deps.metrics.deliveries.inc({ status: outcome.status });
  if (outcome.firstSuccessAfter !== null) deps.metrics.deliveryDelay.observe(outcome.firstSuccessAfter);
  const { retry } = outcome;
  deps.logger.info(
    {
      event: outcome.eventId,
      endpoint: outcome.endpointId,
      attempt: outcome.attemptNumber,
      status: outcome.status,
      ...(retry ? { retryInMs: retry.delayMs } : {}),
    },
    `delivery ${outcome.status}`,
  );
  if (!retry) return;
  deps.metrics.retriesScheduled.inc();
  // After commit. Should this publish be lost, the sweeper sends the attempt once overdue.
  await deps.broker.publishToQueue(deps.broker.topology.delayQueue(retry.delayMs), "retry.due.v1", {
    attempt_id: retry.attemptId,
    delivery_id: retry.deliveryId,
  });
}

async function apply(
  deps: DispatcherDeps,
  tx: Prisma.TransactionClient,
  result: AttemptCompletedV1,
): Promise<Outcome | null> {
  const { config } = deps;
  const completedAt = new Date(result.completed_at);
  await tx.$queryRaw`SELECT id FROM deliveries WHERE id = ${result.delivery_id} FOR UPDATE`;
  const updated = await tx.attempt.updateMany({
    where: { id: result.attempt_id, status: "pending" },
    data: {
      status: result.succeeded ? "succeeded" : "failed",
      responseStatus: result.response_status,
      responseBody: result.response_body,
      error: result.error,
      durationMs: result.duration_ms,
      traceId: result.trace_id,
      completedAt,
      ...(result.request_headers ? { requestHeaders: result.request_headers } : {}),
    },
  });
  if (!updated.count) return null;
  const attempt = await tx.attempt.findUniqueOrThrow({ where: { id: result.attempt_id } });
  const delivery = await tx.delivery.findUniqueOrThrow({
    where: { id: attempt.deliveryId },
    include: { endpoint: true, event: { select: { createdAt: true } } },
  });
  const { endpoint } = delivery;
  const about = {
    eventId: attempt.eventId,
    endpointId: attempt.endpointId,
    appId: attempt.appId,
    attemptNumber: attempt.attemptNumber,
  };
  const settle = async (
    status: string,
    extra: { nextAttemptAt: Date | null } | object = { nextAttemptAt: null },
  ) => {
    await tx.delivery.update({
      where: { id: delivery.id },
      data: {
        attempts: { increment: 1 },
        lastAttemptAt: completedAt,
        updatedAt: new Date(),
        status,
        ...extra,
      },
    });
  };

  if (result.succeeded) {
    await settle("succeeded");
    // A success resets the endpoint's failure clock.
    if (endpoint.failingSince)
      await tx.endpoint.update({ where: { id: endpoint.id }, data: { failingSince: null } });
    const first = delivery.status !== "succeeded";
    const firstSuccessAfter = first
      ? (completedAt.getTime() - delivery.event.createdAt.getTime()) / 1000
      : null;
    return { ...about, status: "succeeded", retry: null, firstSuccessAfter };
  }
  if (delivery.status !== "pending" && delivery.status !== "retrying") {
    // Dropped or ended while this attempt was in flight: log it, change nothing else.
    await settle(delivery.status, {});
    return { ...about, status: delivery.status, retry: null, firstSuccessAfter: null };
  }
  const failingSince = endpoint.failingSince ?? completedAt;
  if (!endpoint.failingSince)
    await tx.endpoint.update({ where: { id: endpoint.id }, data: { failingSince } });
  const failingFor = completedAt.getTime() - failingSince.getTime();
  const tooLong = failingFor >= config.endpointDisableAfterMs;
  if (tooLong && !endpoint.disabled && !endpoint.deletedAt) {
    await tx.endpoint.update({
      where: { id: endpoint.id },
      data: {
        disabled: true,
        disabledReason: `Disabled automatically: every attempt failed for ${days(failingFor)}, since ${failingSince.toISOString()}.`,
        updatedAt: new Date(),
      },
    });
  }
  const delayMs =
    endpoint.deletedAt || endpoint.disabled || tooLong
      ? null
      : nextDelay(config.retrySchedule, attempt.attemptNumber, result.retry_after_ms);
  if (delayMs === null) {
    const status = endpoint.deletedAt ? "dropped" : "failed";
    await settle(status);
    return { ...about, status, retry: null, firstSuccessAfter: null };
  }
  const scheduledAt = new Date(Date.now() + delayMs);
  const next = await tx.attempt.create({
    data: {
      id: newId("attempt"),
      accountId: attempt.accountId,
      appId: attempt.appId,
      deliveryId: delivery.id,
      eventId: attempt.eventId,
      endpointId: attempt.endpointId,
      attemptNumber: attempt.attemptNumber + 1,
      status: "pending",
      url: endpoint.url,
      scheduledAt,
    },
  });
  await settle("retrying", { nextAttemptAt: scheduledAt });
  return {
    ...about,
    status: "retrying",
    retry: { attemptId: next.id, deliveryId: delivery.id, delayMs },
    firstSuccessAfter: null,
  };
}
