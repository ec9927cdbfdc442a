import type { EndpointDeletedV1, EventErasedV1 } from "@herald/contracts";
import { type DropScope, dropDeliveries } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";

/**
 * What ends a scope's open deliveries: their `pending` and `retrying` deliveries become
 * `dropped`, and their attempts not yet handed to a sender are removed, in batches of 500
 * (`dropDeliveries`). An attempt already with a sender is made, and its result recorded;
 * completed attempts stay listable. Redelivery is harmless: a second run finds nothing left open.
 */
async function dropOpen(deps: DispatcherDeps, scope: DropScope, log: object, msg: string): Promise<void> {
  const dropped = await dropDeliveries(deps.db, scope);
  if (!dropped) return;
  deps.metrics.deliveries.inc({ status: "dropped" }, dropped);
  deps.logger.info({ ...log, deliveries: dropped }, msg);
}

/** `endpoint.deleted.v1`: nothing more is sent to the endpoint. */
export function dropEndpoint(deps: DispatcherDeps, message: EndpointDeletedV1): Promise<void> {
  return dropOpen(
    deps,
    { endpointId: message.endpoint_id },
    { endpoint: message.endpoint_id },
    "endpoint deleted: pending deliveries dropped",
  );
}

/**
 * `event.erased.v1`: the api-gateway blanked the event's payload; nothing more is sent for it.
 * Fan-out and replays pass an erased event by (`@herald/db/lifecycle`).
 */
export function eraseEvent(deps: DispatcherDeps, message: EventErasedV1): Promise<void> {
  return dropOpen(
    deps,
    { eventId: message.event_id },
    { event: message.event_id },
    "payload erased: pending deliveries dropped",
  );
}
