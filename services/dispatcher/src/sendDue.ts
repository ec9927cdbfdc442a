import { checkDue } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";
import { countEnded } from "./metrics.ts";
import { releaseAttempts } from "./releaseAttempts.ts";

/**
 * Stage 4, `retry.due.v1` (a retry whose wait ran out), and attempts the gate found waiting
 * for an endpoint deleted or disabled since: each is checked before it is sent (the
 * lifecycle's `checkDue`): when the delivery ended meanwhile, or the endpoint was deleted or
 * disabled, the attempt is removed instead and the delivery takes the status that says why.
 * The rest go to their endpoints' queues in the release gate (stage 2).
 *
 * Redelivery is harmless: only `pending` attempts are considered, and the gate sends only
 * attempts not yet sent.
 */
export async function sendDue(deps: DispatcherDeps, attemptIds: string[]): Promise<void> {
  const { sendable, endpoints, ended } = await checkDue(deps.db, attemptIds);
  countEnded(deps.metrics, ended);
  if (sendable.length) await releaseAttempts(deps, { endpoints, due: sendable });
}
