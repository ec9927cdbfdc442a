import type { AttemptRequestedV1 } from "@herald/contracts";
import { type Context, context, contextFrom, trace, traceIdOf } from "@herald/runtime";
import type { Link } from "@opentelemetry/api";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Hands pending attempts to the senders: one `attempt.requested.v1` each, built from the
 * database (senders have none), published with confirms, then marked `sent_at`. Attempts
 * that are no longer pending are skipped. Used by fan-out, due retries, replays and the
 * sweeper alike.
 *
 * Each attempt joins its event's trace (kept on the event row): under the active span when
 * that is already in the event's trace (fan-out, a due retry), else directly under the
 * event's context with a link to the active span (a replay, the sweeper).
 */
function traceOf(traceContext: string | null): { context?: Context; links: Link[] } {
  const active = context.active();
  if (!traceContext) return { links: [] };
  const eventContext = contextFrom({ traceparent: traceContext });
  if (traceIdOf(active) === traceIdOf(eventContext)) return { links: [] };
  const activeSpan = trace.getSpanContext(active);
  return { context: eventContext, links: activeSpan ? [{ context: activeSpan }] : [] };
}

export async function sendAttempts(deps: DispatcherDeps, attemptIds: string[]): Promise<number> {
  if (!attemptIds.length) return 0;
  const { prisma, broker } = deps;
  const attempts = await prisma.attempt.findMany({
    where: { id: { in: attemptIds }, status: "pending" },
    include: { delivery: { include: { endpoint: true, event: true } } },
    orderBy: { id: "asc" },
  });
  const now = new Date();
  const traces = new Map(attempts.map((a) => [a.id, traceOf(a.delivery.event.traceContext)]));
  const messages: AttemptRequestedV1[] = attempts.map(({ delivery, ...attempt }) => {
    const { endpoint, event } = delivery;
    const previous =
      endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now
        ? [endpoint.previousSecret]
        : [];
    return {
      attempt_id: attempt.id,
      delivery_id: delivery.id,
      event_id: event.id,
      endpoint_id: endpoint.id,
      app_id: delivery.appId,
      attempt_number: attempt.attemptNumber,
      url: endpoint.url,
      headers: endpoint.headers as Record<string, string>,
      secrets: [endpoint.secret, ...previous],
      payload: JSON.stringify({
        type: event.type,
        timestamp: event.createdAt.toISOString(),
        data: event.data,
      }),
    };
  });
  // Oldest first: the broker keeps publish order within one channel.
  await Promise.all(
    messages.map((m) =>
      broker.publish("attempt.requested.v1", m, {
        messageId: m.attempt_id,
        ...traces.get(m.attempt_id),
        attributes: {
          "herald.event_id": m.event_id,
          "herald.endpoint_id": m.endpoint_id,
          "herald.app_id": m.app_id,
          "herald.attempt_number": m.attempt_number,
        },
      }),
    ),
  );
  await prisma.attempt.updateMany({
    where: { id: { in: attempts.map((a) => a.id) } },
    data: { sentAt: new Date() },
  });
  return messages.length;
}
