import type { AppDeletedV1 } from "@herald/contracts";
import { purgeApp } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";
import { SLICE_MS } from "./slices.ts";

/**
 * `app.deleted.v1`: the api-gateway marked the app deleted (no read shows it from then on) and
 * answered at once; here its deliveries and attempts, events and endpoints, then the app row,
 * are deleted in transactions of 500 rows, so an app with millions of attempts holds no lock
 * for long and cannot deadlock with the results being recorded meanwhile. After SLICE_MS the
 * rest is left to the same message, published again.
 *
 * Redelivery is harmless: a run cut short is carried on by the next; an app already gone is
 * nothing to do.
 */
export async function deleteApp(deps: DispatcherDeps, message: AppDeletedV1): Promise<void> {
  const { logger } = deps;
  const purged = await purgeApp(deps.db, message.app_id, {
    until: Date.now() + SLICE_MS,
    onBatch: (progress) => logger.debug({ app: message.app_id, ...progress }, "deleting app"),
  });
  if (!purged) return;
  const { done, ...counts } = purged;
  if (done) {
    logger.info({ app: message.app_id, ...counts }, "app deleted");
    return;
  }
  logger.info({ app: message.app_id, ...counts }, "deleting app: more to delete, carried on later");
  await deps.broker.publish("app.deleted.v1", message);
}
