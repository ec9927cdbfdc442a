import { checkDue } from "@herald/db/lifecycle";
import type { DeliveryStatus } from "@herald/db/statuses";
import type { DispatcherDeps } from "./deps.ts";
import { sendAttempts } from "./sendAttempts.ts";

/**
 * Stage 4, `retry.due.v1` (a retry whose wait ran out) and the sweeper's stranded attempts:
 * each is checked before it is sent (the lifecycle's `checkDue`): when the delivery ended
 * meanwhile, or the endpoint was deleted or disabled, the attempt is removed instead and the
 * delivery takes the status that says why. The rest go to the senders (stage 2).
 *
 * Redelivery is harmless: only `pending` attempts are considered, and a resend of an attempt
 * already with a sender is what the sweeper does on purpose (its result is recorded once).
 */
export async function sendDue(deps: DispatcherDeps, attemptIds: string[]): Promise<void> {
  const { sendable, ended } = await checkDue(deps.db, attemptIds);
  for (const [status, count] of Object.entries(ended) as [DeliveryStatus, number][])
    deps.metrics.deliveries.inc({ status }, count);
  await sendAttempts(deps, sendable);
}
