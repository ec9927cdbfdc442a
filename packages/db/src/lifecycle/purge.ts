import { inTransaction, type Pool } from "../pool.ts";
import { lockDeliveries } from "./locks.ts";

/**
 * Rows a transaction: 500 keeps each short (milliseconds), so the results the dispatcher
 * records meanwhile for other apps wait on no lock for long.
 */
const BATCH = 500;

export type PurgeProgress = { deliveries: number; events: number; endpoints: number };

/**
 * After an app's deletion (the api-gateway marked it `deleted_at`, so no read shows it): its
 * deliveries with their attempts, its events, its endpoints and finally the app row are
 * deleted, in bounded transactions, deliveries under the locking rule. Stops after the batch
 * during which `until` (epoch ms) passed, with `done: false`: the caller carries on later, so
 * no one message is held for long, and each call gets at least one batch done. `onBatch` hears of each step, for progress in the logs;
 * null when there is nothing to do.
 *
 * Idempotent: a run cut short leaves the rest, and the next run goes on from there. An app
 * that is not marked deleted is left alone. The log holds no foreign keys (migration 0016): an
 * event a gateway accepted for the app in the moment it was deleted, and wrote after the last
 * batch, stays until retention takes it.
 */
export async function purgeApp(
  pool: Pool,
  appId: string,
  {
    until = Number.POSITIVE_INFINITY,
    onBatch = () => {},
  }: { until?: number; onBatch?: (p: PurgeProgress) => void },
): Promise<(PurgeProgress & { done: boolean }) | null> {
  const { rows: apps } = await pool.query<{ account_id: string }>(
    "SELECT account_id FROM apps WHERE id = $1 AND deleted_at IS NOT NULL",
    [appId],
  );
  const app = apps[0];
  if (!app) return null;
  const progress: PurgeProgress = { deliveries: 0, events: 0, endpoints: 0 };
  const late = () => Date.now() > until;
  const { rows: endpoints } = await pool.query<{ id: string }>("SELECT id FROM endpoints WHERE app_id = $1", [
    appId,
  ]);
  for (const endpoint of endpoints) {
    for (let more = true; more; ) {
      more = await inTransaction(pool, async (tx) => {
        const { rows } = await tx.query<{ id: string }>(
          "SELECT id FROM deliveries WHERE endpoint_id = $1 LIMIT $2",
          [endpoint.id, BATCH],
        );
        const ids = [
          ...(
            await lockDeliveries(
              tx,
              rows.map((r) => r.id),
            )
          ).keys(),
        ];
        await tx.query(
          `WITH a AS (DELETE FROM attempts WHERE delivery_id = ANY($1)) DELETE FROM deliveries WHERE id = ANY($1)`,
          [ids],
        );
        progress.deliveries += ids.length;
        return rows.length === BATCH;
      });
      onBatch(progress);
      if (more && late()) return { ...progress, done: false };
    }
  }
  for (let more = true; more; ) {
    // Deliveries a fan-out added meanwhile go with their event.
    const { rowCount } = await pool.query(
      `WITH ev AS (SELECT id FROM events WHERE account_id = $1 AND app_id = $2 LIMIT $3),
            a AS (DELETE FROM attempts WHERE event_id IN (SELECT id FROM ev)),
            d AS (DELETE FROM deliveries WHERE event_id IN (SELECT id FROM ev))
       DELETE FROM events WHERE id IN (SELECT id FROM ev)`,
      [app.account_id, appId, BATCH],
    );
    progress.events += rowCount ?? 0;
    more = rowCount === BATCH;
    onBatch(progress);
    if (more && late()) return { ...progress, done: false };
  }
  const removed = await pool.query("DELETE FROM endpoints WHERE app_id = $1", [appId]);
  progress.endpoints = removed.rowCount ?? 0;
  await pool.query("DELETE FROM apps WHERE id = $1", [appId]);
  return { ...progress, done: true };
}
