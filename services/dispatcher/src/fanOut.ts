import { handleItems, type Item, type ReceivedOf } from "@herald/broker";
import {
  type EventCreatedV1,
  type EventsCreatedV1,
  REQUEST_BODY_MAX_BYTES,
  STORED_DATA_GROWTH,
} from "@herald/contracts";
import {
  createDeliveries,
  eventPayloads,
  eventsToFanOut,
  type FanOutEndpoint,
  type FanOutEvent,
  markFannedOut,
} from "@herald/db/lifecycle";
import { context, trace } from "@herald/runtime";
import { inChunks } from "./chunks.ts";
import type { DispatcherDeps } from "./deps.ts";
import { matchEndpoints } from "./matchEndpoints.ts";
import { publishReleased, releaseAttempts } from "./releaseAttempts.ts";

/**
 * Stage 1, `event.created.v1`, a batch at a time: one delivery per endpoint of each event's
 * app that receives it (matchEndpoints.ts), each with a pending first attempt (the lifecycle's
 * fanOutStatements.ts), then those endpoints' queues through the release gate
 * (releaseAttempts.ts). An event whose app was deleted since is skipped.
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
  const targets = await matchInChunks(deps, events, endpoints, onlyTo);
  // Endpoints per event, counted once: an app with thousands of endpoints costs a pass, not a square.
  const counts = new Map<string, number>();
  for (const t of targets) counts.set(t.event.id, (counts.get(t.event.id) ?? 0) + 1);
  const untargeted = events.filter((e) => !counts.has(e.id)).map((e) => e.id);
  if (untargeted.length) await markFannedOut(deps.db, untargeted);
  if (!targets.length) return;
  const { created, outOfOrder, send, gate } = await createDeliveries(
    deps.db,
    targets,
    deps.config.flow.maxInFlight,
  );
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
  const parentOf = (eventId: string) => contexts.get(eventId);
  await Promise.all([
    publishReleased(deps, send, parentOf),
    releaseAttempts(deps, { endpoints: gate }, parentOf),
  ]);
}

/**
 * Payloads read to match filters, at once, in bytes of stored JSON text at most (a larger event
 * alone): parsed, an object of many small keys takes several times its text on the heap, and two
 * batches are handled at once.
 */
export const MATCH_CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * matchEndpoints, with the payloads filters read brought in a chunk at a time and let go once
 * matched: a batch of a hundred events of a megabyte never sits parsed in the heap at once.
 */
async function matchInChunks(
  deps: DispatcherDeps,
  events: FanOutEvent[],
  endpoints: FanOutEndpoint[],
  onlyTo: ReadonlyMap<string, string>,
): Promise<{ event: FanOutEvent; endpoint: FanOutEndpoint }[]> {
  const readers = events.filter((e) => e.reads_data && !onlyTo.has(e.id));
  const targets = matchEndpoints(
    events.filter((e) => !readers.includes(e)),
    endpoints,
    onlyTo,
  );
  const size = (e: FanOutEvent) => (e.data_bytes ?? REQUEST_BODY_MAX_BYTES) * STORED_DATA_GROWTH;
  let since = performance.now();
  for (const chunk of inChunks(readers, size, MATCH_CHUNK_BYTES)) {
    const payloads = await eventPayloads(
      deps.db,
      chunk.map((e) => e.id),
    );
    for (const e of chunk) {
      e.data = payloads.get(e.id);
      targets.push(...matchEndpoints([e], endpoints, onlyTo));
      e.data = undefined;
      // Each event's matching is bounded (MATCH_TIME_MS); a batch of them is not: the event
      // loop is let go between them, for the other batch, results and retries.
      if (performance.now() - since > YIELD_AFTER_MS) {
        await new Promise((r) => setImmediate(r));
        since = performance.now();
      }
    }
  }
  return targets;
}

/** The longest the fan-out's matching holds the event loop before it lets others run. */
const YIELD_AFTER_MS = 10;
