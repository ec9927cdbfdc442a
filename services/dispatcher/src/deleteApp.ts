import type { AppDeletedV1 } from "@herald/contracts";
import { purgeApp } from "@herald/db/lifecycle";
import type { DispatcherDeps } from "./deps.ts";

/**
 * `app.deleted.v1`: the api-gateway marked the app deleted (no read shows it from then on) and
 * answered at once; here its deliveries and attempts, events and endpoints, then the app row,
 * are deleted in transactions of 500 rows, so an app with millions of attempts holds no lock
 * for long and cannot deadlock with the results being recorded meanwhile.
 *
 * Redelivery is harmless: a run cut short is carried on by the next; an app already gone is
 * nothing to do.
 */
export async function deleteApp(deps: DispatcherDeps, message: AppDeletedV1): Promise<void> {
  const { logger } = deps;
  let lastLog = Date.now();
  const done = await purgeApp(deps.db, message.app_id, (progress) => {
    // Progress on a long deletion, every 10 s.
    if (Date.now() - lastLog < 10_000) return;
    lastLog = Date.now();
    logger.info({ app: message.app_id, ...progress }, "deleting app");
  });
  if (done) logger.info({ app: message.app_id, ...done }, "app deleted");
}
