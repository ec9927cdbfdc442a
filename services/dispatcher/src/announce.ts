import type { StagedMessage } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Publishes the operational events a transaction wrote (the lifecycle's operational.ts), once
 * it committed, and deletes their outbox rows once confirmed. Should this fail, the gateway's
 * outbox relay publishes them a few seconds later; fan-out dedupes by event id.
 */
export async function announce(deps: DispatcherDeps, staged: StagedMessage[]): Promise<void> {
  if (!staged.length) return;
  deps.metrics.operationalEvents.inc(staged.length);
  try {
    await Promise.all(staged.map((m) => deps.broker.publish(m.name, m.payload, { messageId: m.messageId })));
    await deps.db.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [staged.map((m) => m.id)]);
  } catch (err) {
    deps.dbOutage.passFailed(err, "operational events not published now: the outbox relay publishes them", {
      events: staged.length,
    });
  }
}
