import type { Received } from "@herald/broker";
import { newId } from "@herald/db";
import { context, trace } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { sendAttempts } from "./dispatch.ts";
import { receives } from "./retries.ts";

type EventRow = { id: string; account_id: string; app_id: string; type: string };
type EndpointRow = { id: string; app_id: string; url: string; event_types: string[] };

/**
 * `event.created.v1`, a batch at a time: one delivery per endpoint of each event's app that is
 * neither deleted nor disabled and receives the event's type, each with a pending first
 * attempt, handed to the senders. Five statements for the whole batch.
 *
 * Idempotent by the unique keys delivery (event_id, endpoint_id) and attempt (delivery_id,
 * attempt_number): a redelivered message (the outbox relay published it twice, or a
 * dispatcher died mid-way) creates nothing twice, and only first attempts not yet handed to
 * a sender (`sent_at` null) are sent.
 */
export async function fanOut(deps: DispatcherDeps, messages: Received<"event.created.v1">[]): Promise<void> {
  const { pool } = deps;
  const contexts = new Map(messages.map((m) => [m.body.event_id, m.context]));
  // A test event goes to its one endpoint only.
  const onlyTo = new Map(
    messages.filter((m) => m.body.only_endpoint).map((m) => [m.body.event_id, m.body.only_endpoint!]),
  );
  for (const m of messages)
    trace
      .getSpan(m.context)
      ?.setAttributes({ "herald.event_id": m.body.event_id, "herald.app_id": m.body.app_id });
  // An event whose app was deleted since is gone: nothing is left to deliver to.
  const { rows: events } = await pool.query<EventRow>(
    "SELECT id, account_id, app_id, type FROM events WHERE id = ANY($1)",
    [[...contexts.keys()]],
  );
  if (!events.length) return;
  const { rows: endpoints } = await pool.query<EndpointRow>(
    // Prisma keeps an empty list as NULL.
    "SELECT id, app_id, url, COALESCE(event_types, '{}') AS event_types FROM endpoints WHERE app_id = ANY($1) AND deleted_at IS NULL AND NOT disabled",
    [[...new Set(events.map((e) => e.app_id))]],
  );
  const targets = events
    .flatMap((event) =>
      endpoints
        .filter(
          (e) =>
            e.app_id === event.app_id &&
            receives(e.event_types, event.type) &&
            (!onlyTo.has(event.id) || onlyTo.get(event.id) === e.id),
        )
        .map((endpoint) => ({ event, endpoint })),
    )
    // One lock order for every dispatcher: concurrent batches cannot deadlock.
    .sort((a, b) => (a.event.id + a.endpoint.id < b.event.id + b.endpoint.id ? -1 : 1));
  if (!targets.length) return;
  // One statement, atomic: new deliveries come from the CTE, those a redelivery finds
  // already there from the table (a CTE's inserts are not visible to its own statement).
  const { rows } = await pool.query<{ created: number }>(
    `WITH x AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         AS x(delivery_id, attempt_id, account_id, app_id, event_id, endpoint_id, url)),
     d AS (
       INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts, created_at, updated_at)
       SELECT delivery_id, account_id, app_id, event_id, endpoint_id, 'pending', 0, now(), now() FROM x
       ON CONFLICT (event_id, endpoint_id) DO NOTHING
       RETURNING id, event_id, endpoint_id),
     known AS (
       SELECT id, event_id, endpoint_id FROM d
       UNION ALL
       SELECT id, event_id, endpoint_id FROM deliveries WHERE event_id = ANY($5::text[])),
     a AS (
       INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, created_at)
       SELECT x.attempt_id, x.account_id, x.app_id, known.id, x.event_id, x.endpoint_id, 1, 'pending', x.url, now(), now()
       FROM x JOIN known ON known.event_id = x.event_id AND known.endpoint_id = x.endpoint_id
       ON CONFLICT (delivery_id, attempt_number) DO NOTHING)
     SELECT count(*)::int AS created FROM d`,
    [
      targets.map(() => newId("delivery")),
      targets.map(() => newId("attempt")),
      targets.map((t) => t.event.account_id),
      targets.map((t) => t.event.app_id),
      targets.map((t) => t.event.id),
      targets.map((t) => t.endpoint.id),
      targets.map((t) => t.endpoint.url),
    ],
  );
  const created = rows[0]?.created ?? 0;
  if (created) deps.metrics.deliveries.inc({ status: "pending" }, created);
  for (const event of events) {
    const count = targets.filter((t) => t.event.id === event.id).length;
    if (count)
      context.with(contexts.get(event.id)!, () =>
        deps.logger.info({ event: event.id, app: event.app_id, endpoints: count }, "event fanned out"),
      );
  }
  await sendAttempts(deps, { firstOfEvents: events.map((e) => e.id) }, (eventId) => contexts.get(eventId));
}
