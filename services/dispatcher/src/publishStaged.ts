import { deleteRows, type StagedMessage } from "@herald/db/outbox";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Publishes the operational events a lifecycle transaction staged in the outbox (the
 * lifecycle's operational.ts), once it committed, and deletes their outbox rows once confirmed.
 * Should this fail, the gateway's outbox relay publishes them a few seconds later; fan-out
 * dedupes by event id. The outbox itself, its table and statements: packages/db/src/outbox.
 */
export async function publishStaged(deps: DispatcherDeps, staged: StagedMessage[]): Promise<void> {
  if (!staged.length) return;
  deps.metrics.operationalEvents.inc(staged.length);
  try {
    await Promise.all(staged.map((m) => deps.broker.publish(m.name, m.payload, { messageId: m.messageId })));
    await deleteRows(
      deps.db,
      staged.map((m) => m.id),
    );
  } catch (err) {
    deps.dbOutage.passFailed(err, "operational events not published now: the outbox relay publishes them", {
      events: staged.length,
    });
  }
}
