import {
  attemptsToSend,
  checkDue,
  claimStranded,
  recountInFlight,
  wakeForgotten,
} from "@herald/db/lifecycle";
import { inTransaction } from "@herald/db/pool";
import type { DispatcherDeps } from "./deps.ts";
import { countEnded } from "./metrics.ts";
import { publishAttempts } from "./publishAttempts.ts";

/**
 * Recovers what a crash or a lost message left behind:
 * - attempts sent with no result ATTEMPT_DEADLINE after they were sent: checked (stage 4's
 *   `checkDue`) and sent again, straight to the senders (they still count as in flight);
 * - endpoints whose attempts wait, due for SWEEP_GRACE, unknown to the release gate (a
 *   retry's wake-up message lost): the gate looks at them now;
 * - endpoints' counts of attempts in flight, recounted (an attempt ended while in flight).
 * A transaction-scoped advisory lock lets one dispatcher replica claim them at a time; a
 * claimed attempt counts as sent, so no other pass takes it before ATTEMPT_DEADLINE.
 */
const SWEEP_LOCK = 727_002;
/** Attempts a pass: a backlog is worked off over several passes, never in one long one. */
const SWEEP_LIMIT = 500;

export async function sweepOnce(deps: DispatcherDeps): Promise<number> {
  const { config, db } = deps;
  const now = Date.now();
  // Claimed under the lock, sent after it: the lock's transaction holds no connection while
  // attempts are sent (a pool of one must not wait on itself).
  const claimed = await inTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      SWEEP_LOCK,
    ]);
    if (!rows[0]?.locked) return null;
    return claimStranded(tx, { sentBefore: new Date(now - config.attemptDeadlineMs), limit: SWEEP_LIMIT });
  });
  if (!claimed) return 0;
  const woken = await wakeForgotten(db, new Date(now - config.sweepGraceMs));
  if (woken) deps.logger.warn({ endpoints: woken }, "sweeper found endpoints with attempts waiting unknown");
  const recounted = await recountInFlight(db);
  if (recounted) deps.logger.info({ endpoints: recounted }, "sweeper corrected endpoints' counts in flight");
  if (claimed.length) {
    deps.logger.warn({ attempts: claimed.length }, "sweeper recovering attempts sent with no result");
    const { sendable, ended } = await checkDue(db, claimed);
    countEnded(deps.metrics, ended);
    await publishAttempts(deps, await attemptsToSend(db, sendable));
  }
  return claimed.length + woken;
}

export function startSweeper(deps: DispatcherDeps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOnce(deps).catch((err) => deps.dbOutage.passFailed(err, "sweep failed; will retry"));
  }, deps.config.sweepIntervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
