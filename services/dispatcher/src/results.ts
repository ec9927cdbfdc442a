import type { AttemptCompletedV1 } from "@herald/contracts";
import { newId } from "@herald/db";
import type { DispatcherDeps } from "./deps.ts";
import { nextDelay } from "./retries.ts";

type Outcome = { retry: { attemptId: string; deliveryId: string; delayMs: number } | null };

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
  const { prisma, config } = deps;
  const completedAt = new Date(result.completed_at);
  const outcome = await prisma.$transaction(async (tx): Promise<Outcome | null> => {
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
      },
    });
    if (!updated.count) return null;
    const attempt = await tx.attempt.findUniqueOrThrow({ where: { id: result.attempt_id } });
    const delivery = await tx.delivery.findUniqueOrThrow({
      where: { id: attempt.deliveryId },
      include: { endpoint: true },
    });
    const counted = { attempts: { increment: 1 }, lastAttemptAt: completedAt, updatedAt: new Date() };
    const endpoint = delivery.endpoint;

    if (result.succeeded) {
      await tx.delivery.update({
        where: { id: delivery.id },
        data: { ...counted, status: "succeeded", nextAttemptAt: null },
      });
      // A success resets the endpoint's failure clock.
      if (endpoint.failingSince)
        await tx.endpoint.update({ where: { id: endpoint.id }, data: { failingSince: null } });
      return { retry: null };
    }
    if (delivery.status !== "pending" && delivery.status !== "retrying") {
      // Dropped or ended while this attempt was in flight: log it, change nothing else.
      await tx.delivery.update({ where: { id: delivery.id }, data: counted });
      return { retry: null };
    }
    const failingSince = endpoint.failingSince ?? completedAt;
    if (!endpoint.failingSince)
      await tx.endpoint.update({ where: { id: endpoint.id }, data: { failingSince } });
    const failingFor = completedAt.getTime() - failingSince.getTime();
    if (!endpoint.disabled && !endpoint.deletedAt && failingFor >= config.endpointDisableAfterMs) {
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
      endpoint.deletedAt || endpoint.disabled || failingFor >= config.endpointDisableAfterMs
        ? null
        : nextDelay(config.retrySchedule, attempt.attemptNumber, result.retry_after_ms);
    if (delayMs === null) {
      const status = endpoint.deletedAt ? "dropped" : "failed";
      await tx.delivery.update({
        where: { id: delivery.id },
        data: { ...counted, status, nextAttemptAt: null },
      });
      return { retry: null };
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
    await tx.delivery.update({
      where: { id: delivery.id },
      data: { ...counted, status: "retrying", nextAttemptAt: scheduledAt },
    });
    return { retry: { attemptId: next.id, deliveryId: delivery.id, delayMs } };
  });
  // After commit. Should this publish be lost, the sweeper sends the attempt once overdue.
  if (outcome?.retry) {
    const { attemptId, deliveryId, delayMs } = outcome.retry;
    await deps.broker.publishToQueue(deps.broker.topology.delayQueue(delayMs), "retry.due.v1", {
      attempt_id: attemptId,
      delivery_id: deliveryId,
    });
  }
}
