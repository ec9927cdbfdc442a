import type { EndpointDeletedV1 } from "@herald/contracts";
import type { DispatcherDeps } from "./deps.ts";

/**
 * `endpoint.deleted.v1`: the endpoint's pending and retrying deliveries become `dropped`, and
 * their attempts not yet handed to a sender are removed. Completed attempts stay listable.
 * Idempotent: a second run finds nothing left to drop.
 */
export async function dropEndpoint(deps: DispatcherDeps, message: EndpointDeletedV1): Promise<void> {
  const { prisma } = deps;
  const [dropped] = await prisma.$transaction([
    prisma.delivery.updateMany({
      where: { endpointId: message.endpoint_id, status: { in: ["pending", "retrying"] } },
      data: { status: "dropped", nextAttemptAt: null, updatedAt: new Date() },
    }),
    prisma.attempt.deleteMany({
      where: { endpointId: message.endpoint_id, status: "pending", sentAt: null },
    }),
  ]);
  if (dropped.count) {
    deps.metrics.deliveries.inc({ status: "dropped" }, dropped.count);
    deps.logger.info(
      { endpoint: message.endpoint_id, deliveries: dropped.count },
      "endpoint deleted: pending deliveries dropped",
    );
  }
}
