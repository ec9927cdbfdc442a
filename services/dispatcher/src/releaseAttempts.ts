import { type AttemptToSend, checkDue, type ReleaseTarget, release, unrelease } from "@herald/db/lifecycle";
import type { Context } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { countEnded } from "./metrics.ts";
import { PublishFailed, publishAttempts } from "./publishAttempts.ts";
import { repeat } from "./repeat.ts";

/**
 * Stage 2: hands waiting attempts to the senders through the release gate (the lifecycle's
 * `release`): only as many of an endpoint's as its pause, in-flight limit and rate limit
 * allow, round robin across endpoints; the rest wait in PostgreSQL for the gate's poll
 * (`startReleasing`) or for results to make room. Fan-out, due retries and replays all send
 * through here; attempts of an endpoint deleted or disabled meanwhile are ended instead
 * (stage 4's check). Returns how many endpoints the gate looked at.
 *
 * Released attempts are marked sent before they are published: those whose publish fails are
 * put back (`unrelease`), and what that misses the sweeper sends after ATTEMPT_DEADLINE.
 */
export async function releaseAttempts(
  deps: DispatcherDeps,
  target: ReleaseTarget,
  parentOf?: (eventId: string) => Context | undefined,
): Promise<number> {
  if ("endpoints" in target && !target.endpoints.length) return 0;
  const r = await release(deps.db, target, deps.config.flow);
  for (const h of r.held) deps.metrics.held.inc({ reason: h.heldBy });
  if (r.stale.length) countEnded(deps.metrics, (await checkDue(deps.db, r.stale)).ended);
  await publishReleased(deps, r.send, parentOf);
  return r.endpoints;
}

/**
 * Publishes attempts released (marked sent, counted in flight): by the gate, or by fan-out's
 * fast path. Only what the broker did not confirm goes back to wait (`unrelease`): a confirmed
 * one is with a sender.
 */
export async function publishReleased(
  deps: DispatcherDeps,
  send: AttemptToSend[],
  parentOf?: (eventId: string) => Context | undefined,
): Promise<void> {
  if (!send.length) return;
  try {
    await publishAttempts(deps, send, parentOf);
  } catch (err) {
    await putBack(deps, err instanceof PublishFailed ? err.attemptIds : send.map((a) => a.id));
    throw err;
  }
}

/** Tries to put back, at most: a row another statement holds is skipped for a moment only. */
const PUT_BACK_TRIES = 20;
const PUT_BACK_WAIT_MS = 50;

/**
 * Puts back attempts whose publish failed, until each is: one left marked sent would wait for the
 * sweeper's ATTEMPT_DEADLINE (10 min by default) with no sender holding it. Seen in the fault
 * suite as RabbitMQ came back: the gate's poll released 96 attempts, their publish failed, and
 * all stayed marked sent while fan-out released to the same endpoint.
 */
async function putBack(deps: DispatcherDeps, ids: string[]): Promise<void> {
  let left = ids;
  for (let tries = 0; left.length && tries < PUT_BACK_TRIES; tries++) {
    if (tries) await new Promise((r) => setTimeout(r, PUT_BACK_WAIT_MS));
    const back = new Set(await unrelease(deps.db, left).catch(() => [] as string[]));
    left = left.filter((id) => !back.has(id));
  }
  if (left.length)
    deps.logger.warn(
      { attempts: left.length },
      "attempts whose publish failed could not be put back now: the sweeper sends them after ATTEMPT_DEADLINE",
    );
}

/** The gate's poll: endpoints whose waiting attempts may go now, a batch at a time. */
const POLL_BATCH = 200;

/**
 * Polls every RELEASE_INTERVAL for endpoints whose `next_release_at` has come (a token is
 * back, a pause ended, a probe is due); a full batch is followed by the next at once. Any
 * dispatcher may poll: each locks the endpoints it takes, skipping those another holds.
 */
export function startReleasing(deps: DispatcherDeps): () => Promise<void> {
  let stopped = false;
  const stop = repeat(deps.config.releaseIntervalMs, async () => {
    try {
      while (!stopped && (await releaseAttempts(deps, { poll: POLL_BATCH })) === POLL_BATCH);
    } catch (err) {
      deps.dbOutage.passFailed(err, "release poll failed; will retry");
    }
  });
  return () => {
    stopped = true;
    return stop();
  };
}
