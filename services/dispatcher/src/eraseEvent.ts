import type { EventErasedV1 } from "@herald/contracts";
import { dropDeliveries } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";

/**
 * `event.erased.v1`: the api-gateway blanked the event's payload; its pending and retrying
 * deliveries become `dropped` and their attempts not yet handed to a sender are removed, so
 * nothing more is sent for it. An attempt already with a sender is made, and its result
 * recorded. Fan-out and replays pass an erased event by (`@herald/db/lifecycle`).
 *
 * Redelivery is harmless: a second run finds nothing left open.
 */
export async function eraseEvent(deps: DispatcherDeps, message: EventErasedV1): Promise<void> {
  const dropped = await dropDeliveries(deps.db, { eventId: message.event_id });
  if (!dropped) return;
  deps.metrics.deliveries.inc({ status: "dropped" }, dropped);
  deps.logger.info(
    { event: message.event_id, deliveries: dropped },
    "payload erased: pending deliveries dropped",
  );
}
