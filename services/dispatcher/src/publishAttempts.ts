import { type AttemptRequestedV1, webhookPayload } from "@herald/contracts";
import { type AttemptToSend, laneOf } from "@herald/db/lifecycle";
import { type Context, context, contextFrom, trace, traceIdOf } from "@herald/runtime";
import type { Link } from "@opentelemetry/api";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Hands attempts to the senders, one `attempt.requested.v1` each, built from the database
 * (senders have none), each to its lane's queue (`live`: first attempts of new events;
 * `backlog`: retries and replays), published with confirms, in the order given.
 *
 * Each attempt joins its event's trace (kept on the event row): under the given parent when
 * that is already in the event's trace (fan-out, a due retry), else directly under the
 * event's context with a link to the parent (a replay, the sweeper, the gate's poll).
 */
function traceOf(traceContext: string | null, parent: Context): { context: Context; links: Link[] } {
  if (!traceContext) return { context: parent, links: [] };
  const eventContext = contextFrom({ traceparent: traceContext });
  if (traceIdOf(parent) === traceIdOf(eventContext)) return { context: parent, links: [] };
  const parentSpan = trace.getSpanContext(parent);
  return { context: eventContext, links: parentSpan ? [{ context: parentSpan }] : [] };
}

/** Some attempts were not confirmed by the broker: these, and no others. */
export class PublishFailed extends Error {
  constructor(
    readonly attemptIds: string[],
    cause: unknown,
  ) {
    super(`${attemptIds.length} attempt(s) not published: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/**
 * `parentOf(eventId)`: the context to publish an event's attempts under (default: the active
 * one). Every publish is awaited, confirmed or not; should any fail, PublishFailed names
 * those alone, so the caller puts back only what the senders did not get (putting back one
 * the broker confirmed would send it twice).
 */
export async function publishAttempts(
  deps: DispatcherDeps,
  rows: AttemptToSend[],
  parentOf: (eventId: string) => Context | undefined = () => undefined,
): Promise<void> {
  const now = new Date();
  const { queues } = deps.broker.topology;
  const outcomes = await Promise.allSettled(
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
        // Sealed, when they are: a token in them never crosses the broker in the clear.
        headers: r.headers_sealed ? {} : r.headers,
        sealed_headers: r.headers_sealed,
        ...(r.auth_sealed ? { sealed_auth: r.auth_sealed } : {}),
        secrets: [r.secret, ...previous],
        // `data` is the stored JSON text as it is: no parse and re-serialize per attempt.
        payload: webhookPayload(r.type, r.created_at, r.data),
        timeout_ms: deps.config.attemptTimeoutMs,
      };
      const lane = laneOf(r);
      deps.metrics.released.inc({ lane });
      return deps.broker.publishToQueue(
        lane === "live" ? queues.senderAttempts : queues.senderBacklog,
        "attempt.requested.v1",
        message,
        {
          messageId: r.id,
          ...traceOf(r.trace_context, parentOf(r.event_id) ?? context.active()),
          attributes: {
            "herald.event_id": r.event_id,
            "herald.endpoint_id": r.endpoint_id,
            "herald.app_id": r.app_id,
            "herald.attempt_number": r.attempt_number,
          },
        },
      );
    }),
  );
  const failed = rows.filter((_, i) => outcomes[i]!.status === "rejected").map((r) => r.id);
  const first = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
  if (first) throw new PublishFailed(failed, first.reason);
}
