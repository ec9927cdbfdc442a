import type { EndpointDeletedV1 } from "@herald/contracts";
import { dropDeliveries } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";

/**
 * `endpoint.deleted.v1`: the endpoint's pending and retrying deliveries become `dropped`, and
 * their attempts not yet handed to a sender are removed, in batches of 500. Completed attempts
 * stay listable.
 *
 * Redelivery is harmless: a second run finds nothing left open.
 */
export async function dropEndpoint(deps: DispatcherDeps, message: EndpointDeletedV1): Promise<void> {
  const dropped = await dropDeliveries(deps.db, { endpointId: message.endpoint_id });
  if (!dropped) return;
  deps.metrics.deliveries.inc({ status: "dropped" }, dropped);
  deps.logger.info(
    { endpoint: message.endpoint_id, deliveries: dropped },
    "endpoint deleted: pending deliveries dropped",
  );
}
