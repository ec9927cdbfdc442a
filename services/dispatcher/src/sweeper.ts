import { claimStranded } from "@herald/db/lifecycle";
import { inTransaction } from "@herald/db/pool";
import type { DispatcherDeps } from "./deps.ts";
import { sendDue } from "./sendDue.ts";

/**
 * Recovers attempts a crash left behind: scheduled attempts never handed to a sender
 * (`sent_at` null) SWEEP_GRACE after they were due, and sent attempts with no result
 * ATTEMPT_DEADLINE after they were sent; they go through stage 4 (sendDue.ts) like any due
 * attempt. A transaction-scoped advisory lock lets one dispatcher replica claim them at a
 * time; a claimed attempt counts as sent, so no other pass takes it before ATTEMPT_DEADLINE.
 */
const SWEEP_LOCK = 727_002;
/** Attempts a pass: a backlog is worked off over several passes, never in one long one. */
const SWEEP_LIMIT = 500;

export async function sweepOnce(deps: DispatcherDeps): Promise<number> {
  const { config, db } = deps;
  const now = Date.now();
  // Claimed under the lock, sent after it: the lock's transaction holds no connection while
  // attempts are sent (a pool of one must not wait on itself).
  const ids = await inTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      SWEEP_LOCK,
    ]);
    if (!rows[0]?.locked) return [];
    return claimStranded(tx, {
      dueBefore: new Date(now - config.sweepGraceMs),
      sentBefore: new Date(now - config.attemptDeadlineMs),
      limit: SWEEP_LIMIT,
    });
  });
  if (ids.length) {
    deps.logger.warn({ attempts: ids.length }, "sweeper recovering attempts left pending");
    await sendDue(deps, ids);
  }
  return ids.length;
}

export function startSweeper(deps: DispatcherDeps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOnce(deps).catch((err) =>
      deps.logger.warn({ err: (err as Error).message }, "sweep failed; will retry"),
    );
  }, deps.config.sweepIntervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
