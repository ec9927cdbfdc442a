import type { ReplayRequestedV1 } from "@herald/contracts";
import { completeReplay, type ReplaySpec, replayBatch, startReplay } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";
import { publishStaged } from "./publishStaged.ts";
import { releaseAttempts } from "./releaseAttempts.ts";
import { SLICE_MS } from "./slices.ts";

/** 100 deliveries a batch: each committed, then queued at the release gate, before the next. */
const BATCH = 100;

/**
 * `replay.requested.v1`: the endpoint's `failed` deliveries that match go back to `pending`,
 * oldest event first, each with a new attempt tagged with the replay, in batches of 100,
 * each queued at the release gate (stage 2) once committed: the gate paces them by the
 * endpoint's limits, in its backlog lane, so a replay of thousands delays no one else's
 * events. After SLICE_MS the rest is left to the same message, published again.
 *
 * Redelivery is harmless: a restart redelivers the message, which first sends what the last
 * run committed but never handed over, then carries on with the deliveries still `failed`;
 * the conditional `status = 'failed'` keeps a delivery from being replayed twice.
 */
export async function runReplay(deps: DispatcherDeps, message: ReplayRequestedV1): Promise<void> {
  const { db } = deps;
  if (!(await startReplay(db, message.replay_id))) return;
  const endpoints = { endpoints: [message.endpoint_id] };
  // What a last run queued and never released goes first (the endpoint's queue is in order).
  await releaseAttempts(deps, endpoints);
  const spec: ReplaySpec = {
    replayId: message.replay_id,
    endpointId: message.endpoint_id,
    since: message.since ? new Date(message.since) : null,
    cutoff: new Date(message.cutoff),
    eventId: message.event_id,
    claimed: message.claimed === true,
  };
  const until = Date.now() + SLICE_MS;
  for (let more = true; more; ) {
    if (Date.now() > until) {
      deps.logger.info({ replay: message.replay_id }, "replay: more to queue, carried on later");
      await deps.broker.publish("replay.requested.v1", message);
      return;
    }
    const batch = await replayBatch(db, spec, BATCH);
    deps.metrics.deliveries.inc({ status: "pending" }, batch.attemptIds.length);
    if (batch.attemptIds.length) await releaseAttempts(deps, endpoints);
    more = batch.more;
  }
  await publishStaged(deps, await completeReplay(db, message.replay_id));
}
