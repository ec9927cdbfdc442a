import type { DispatcherDeps } from "./deps.ts";
import { sendAttempts } from "./dispatch.ts";

/**
 * Attempts that came due (a retry whose delay ran out, or one the sweeper found stranded)
 * are checked against Postgres before anything is sent: when the delivery was dropped or
 * already succeeded, or the endpoint was deleted or disabled meanwhile, the attempt is
 * removed instead, and the delivery takes the state that explains why.
 */
export async function dispatchDue(deps: DispatcherDeps, attemptIds: string[]): Promise<void> {
  const { prisma } = deps;
  const attempts = await prisma.attempt.findMany({
    where: { id: { in: attemptIds }, status: "pending" },
    select: {
      id: true,
      delivery: {
        select: { id: true, status: true, endpoint: { select: { deletedAt: true, disabled: true } } },
      },
    },
  });
  const sendable: string[] = [];
  for (const { id, delivery } of attempts) {
    const terminal = ["dropped", "succeeded", "failed"].includes(delivery.status);
    if (!terminal && !delivery.endpoint.deletedAt && !delivery.endpoint.disabled) {
      sendable.push(id);
      continue;
    }
    // A deleted endpoint drops what was due; a disabled one ends it as failed (replayable).
    const status = terminal ? delivery.status : delivery.endpoint.deletedAt ? "dropped" : "failed";
    await prisma.$transaction([
      prisma.attempt.deleteMany({ where: { id, status: "pending" } }),
      prisma.delivery.updateMany({
        where: { id: delivery.id, status: { in: ["pending", "retrying"] } },
        data: { status, nextAttemptAt: null, updatedAt: new Date() },
      }),
    ]);
    deps.metrics.deliveries.inc({ status });
  }
  await sendAttempts(deps, sendable);
}
