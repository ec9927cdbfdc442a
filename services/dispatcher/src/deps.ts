import type { Broker } from "@herald/broker";
import type { DatabaseOutage } from "@herald/db/outage";
import type { Pool } from "@herald/db/pool";
import type { Logger } from "@herald/runtime";
import type { ByteBudget } from "./byteBudget.ts";
import type { DispatcherConfig } from "./config.ts";
import type { DispatcherMetrics } from "./metrics.ts";

/**
 * What the dispatcher's stages use: the process's one database pool (the lifecycle's
 * statements run on it), the broker, config, logs and metrics. The dispatcher is the only
 * writer of deliveries and attempts.
 */
export type DispatcherDeps = {
  db: Pool;
  /** The database's outages, logged once each (a loop's failed pass reports there: `passFailed`). */
  dbOutage: DatabaseOutage;
  broker: Broker;
  config: DispatcherConfig;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** Messages being built and published at once, in bytes, across every stage (PUBLISH_BUDGET_BYTES). */
  publishBudget: ByteBudget;
};
