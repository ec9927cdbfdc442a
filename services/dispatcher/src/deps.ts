import type { Broker } from "@herald/broker";
import type { Pool, PrismaClient } from "@herald/db";
import type { Logger } from "@herald/runtime";
import type { DispatcherConfig } from "./config.ts";
import type { DispatcherMetrics } from "./metrics.ts";

/** What the dispatcher's handlers use. The dispatcher is the only writer of deliveries and attempts. */
export type DispatcherDeps = {
  prisma: PrismaClient;
  /** pg for the hot paths: fan-out, sending attempts, recording successes. */
  pool: Pool;
  broker: Broker;
  config: DispatcherConfig;
  logger: Logger;
  metrics: DispatcherMetrics;
};
