import { handleItems, type Item, type ReceivedOf } from "@herald/broker";
import type { EventCreatedV1, EventsCreatedV1 } from "@herald/contracts";
import { createDeliveries, eventsToFanOut, markFannedOut } from "@herald/db/lifecycle";
import { context, trace } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { matchEndpoints } from "./matchEndpoints.ts";
import { releaseAttempts } from "./releaseAttempts.ts";

/**
 * Stage 1, `event.created.v1`, a batch at a time: one delivery per endpoint of each event's
 * app that receives it (matchEndpoints.ts), each with a pending first attempt, then those
 * endpoints' queues through the release gate (releaseAttempts.ts). An event whose app was
 * deleted since is skipped.
 *
 * Redelivery is harmless by the unique keys delivery (event_id, endpoint_id) and attempt
 * (delivery_id, attempt_number), and the gate sends only attempts not yet handed to a sender
 * (`sent_at` null): the outbox relay may publish an event twice.
 *
 * Gateways publish several events a message (`events.created.v1`; their outbox relay and older
 * gateways one, as `event.created.v1`): each is fanned out in a span of its own under its
 * request's trace, and one event the database refuses does not hold back the others in its
 * message (handleItems).
 */
export async function fanOut(
  deps: DispatcherDeps,
  messages: ReceivedOf<"events.created.v1" | "event.created.v1">[],
): Promise<void> {
  await handleItems<EventCreatedV1>(
    messages,
    "event.created.v1",
    (m) => (m.name === "events.created.v1" ? (m.body as EventsCreatedV1).events : null),
    (items) => fanOutItems(deps, items),
    (err) => deps.broker.isTransient(err),
  );
}

async function fanOutItems(deps: DispatcherDeps, messages: Item<EventCreatedV1>[]): Promise<void> {
  const contexts = new Map(messages.map((m) => [m.body.event_id, m.context]));
  const onlyTo = new Map(
    messages.filter((m) => m.body.only_endpoint).map((m) => [m.body.event_id, m.body.only_endpoint!]),
  );
  for (const m of messages)
    trace
      .getSpan(m.context)
      ?.setAttributes({ "herald.event_id": m.body.event_id, "herald.app_id": m.body.app_id });
  const { events, endpoints } = await eventsToFanOut(deps.db, [...contexts.keys()]);
  const targets = matchEndpoints(events, endpoints, onlyTo);
  // Endpoints per event, counted once: an app with thousands of endpoints costs a pass, not a square.
  const counts = new Map<string, number>();
  for (const t of targets) counts.set(t.event.id, (counts.get(t.event.id) ?? 0) + 1);
  const untargeted = events.filter((e) => !counts.has(e.id)).map((e) => e.id);
  if (untargeted.length) await markFannedOut(deps.db, untargeted);
  if (!targets.length) return;
  const { created, outOfOrder } = await createDeliveries(deps.db, targets);
  if (created) deps.metrics.deliveries.inc({ status: "pending" }, created);
  for (const late of outOfOrder) {
    deps.metrics.fifoOutOfOrder.inc();
    context.with(contexts.get(late.event_id)!, () =>
      deps.logger.warn(
        { event: late.event_id, endpoint: late.endpoint_id, sent_after: late.sent_after },
        "event fanned out after FIFO_FAN_OUT_WAIT: its fifo endpoint was already sent a later event, so it goes out of order",
      ),
    );
  }
  for (const event of events) {
    const count = counts.get(event.id);
    if (count)
      context.with(contexts.get(event.id)!, () =>
        deps.logger.info({ event: event.id, app: event.app_id, endpoints: count }, "event fanned out"),
      );
  }
  await releaseAttempts(deps, { endpoints: targets.map((t) => t.endpoint.id) }, (eventId) =>
    contexts.get(eventId),
  );
}
