import { type AttemptRequestedV1, webhookPayload } from "@herald/contracts";
import { type Context, context, contextFrom, trace, traceIdOf } from "@herald/runtime";
import type { Link } from "@opentelemetry/api";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Hands pending attempts to the senders: one `attempt.requested.v1` each, built from the
 * database (senders have none), published with confirms, then marked `sent_at`. Attempts
 * that are no longer pending are skipped. Used by fan-out, due retries, replays and the
 * sweeper alike; two statements for any number of attempts.
 *
 * Each attempt joins its event's trace (kept on the event row): under the given parent when
 * that is already in the event's trace (fan-out, a due retry), else directly under the
 * event's context with a link to the parent (a replay, the sweeper).
 */
type Row = {
  id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  app_id: string;
  attempt_number: number;
  url: string;
  headers: Record<string, string>;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  type: string;
  data: string;
  created_at: Date;
  trace_context: string | null;
};

function traceOf(traceContext: string | null, parent: Context): { context: Context; links: Link[] } {
  if (!traceContext) return { context: parent, links: [] };
  const eventContext = contextFrom({ traceparent: traceContext });
  if (traceIdOf(parent) === traceIdOf(eventContext)) return { context: parent, links: [] };
  const parentSpan = trace.getSpanContext(parent);
  return { context: eventContext, links: parentSpan ? [{ context: parentSpan }] : [] };
}

/** These attempts, or the first attempts of these events that no sender was handed yet. */
export type Which = string[] | { firstOfEvents: string[] };

/** `parentOf(eventId)`: the context to publish an event's attempts under (default: the active one). */
export async function sendAttempts(
  deps: DispatcherDeps,
  which: Which,
  parentOf: (eventId: string) => Context | undefined = () => undefined,
): Promise<number> {
  const byEvent = !Array.isArray(which);
  const ids = byEvent ? which.firstOfEvents : which;
  if (!ids.length) return 0;
  const { pool, broker } = deps;
  const { rows } = await pool.query<Row>(
    `SELECT a.id, a.delivery_id, a.event_id, a.endpoint_id, a.app_id, a.attempt_number,
            ep.url, ep.headers, ep.secret, ep.previous_secret, ep.previous_secret_expires_at,
            ev.type, ev.data::text AS data, ev.created_at, ev.trace_context
     FROM attempts a JOIN endpoints ep ON ep.id = a.endpoint_id JOIN events ev ON ev.id = a.event_id
     WHERE ${byEvent ? "a.event_id = ANY($1) AND a.attempt_number = 1 AND a.sent_at IS NULL" : "a.id = ANY($1)"} AND a.status = 'pending'
     ORDER BY a.id`,
    [ids],
  );
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
      };
      return broker.publish("attempt.requested.v1", message, {
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
  if (rows.length)
    await pool.query("UPDATE attempts SET sent_at = now() WHERE id = ANY($1)", [rows.map((r) => r.id)]);
  return rows.length;
}
