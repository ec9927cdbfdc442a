import { type AttemptRequestedV1, webhookPayload } from "@herald/contracts";
import { attemptsToSend, markSent, type Which } from "@herald/db/lifecycle";
import { type Context, context, contextFrom, trace, traceIdOf } from "@herald/runtime";
import type { Link } from "@opentelemetry/api";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Stage 2: hands pending attempts to the senders, one `attempt.requested.v1` each, built from
 * the database (senders have none), published with confirms, then marked sent. Attempts no
 * longer pending are skipped. Fan-out, due retries, replays and the sweeper all send through
 * here; two statements for any number of attempts.
 *
 * Each attempt joins its event's trace (kept on the event row): under the given parent when
 * that is already in the event's trace (fan-out, a due retry), else directly under the
 * event's context with a link to the parent (a replay, the sweeper).
 */
function traceOf(traceContext: string | null, parent: Context): { context: Context; links: Link[] } {
  if (!traceContext) return { context: parent, links: [] };
  const eventContext = contextFrom({ traceparent: traceContext });
  if (traceIdOf(parent) === traceIdOf(eventContext)) return { context: parent, links: [] };
  const parentSpan = trace.getSpanContext(parent);
  return { context: eventContext, links: parentSpan ? [{ context: parentSpan }] : [] };
}

/** `parentOf(eventId)`: the context to publish an event's attempts under (default: the active one). */
export async function sendAttempts(
  deps: DispatcherDeps,
  which: Which,
  parentOf: (eventId: string) => Context | undefined = () => undefined,
): Promise<number> {
  const rows = await attemptsToSend(deps.db, which);
  if (!rows.length) return 0;
  const now = new Date();
  // Oldest first: the broker keeps publish order within one channel.
  await Promise.all(
    rows.map((r) => {
      const previous =
        r.previous_secret && r.previous_secret_expires_at && r.previous_secret_expires_at > now
          ? [r.previous_secret]
          : [];
      const message: AttemptRequestedV1 = {
        attempt_id: r.id,
        delivery_id: r.delivery_id,
        event_id: r.event_id,
        endpoint_id: r.endpoint_id,
        app_id: r.app_id,
        attempt_number: r.attempt_number,
        url: r.url,
        headers: r.headers,
        secrets: [r.secret, ...previous],
        // `data` is the stored JSON text as it is: no parse and re-serialize per attempt.
        payload: webhookPayload(r.type, r.created_at, r.data),
        timeout_ms: deps.config.attemptTimeoutMs,
      };
      return deps.broker.publish("attempt.requested.v1", message, {
        messageId: r.id,
        ...traceOf(r.trace_context, parentOf(r.event_id) ?? context.active()),
        attributes: {
          "herald.event_id": r.event_id,
          "herald.endpoint_id": r.endpoint_id,
          "herald.app_id": r.app_id,
          "herald.attempt_number": r.attempt_number,
        },
      });
    }),
  );
  await markSent(
    deps.db,
    rows.map((r) => r.id),
  );
  return rows.length;
}
