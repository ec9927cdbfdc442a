import type { Server } from "node:http";
import { Broker } from "@herald/broker";
import { createPool, createPrisma } from "@herald/db";
import { closeServer, type Logger, type Registry, startHealthServer } from "@herald/runtime";
import type { DispatcherConfig } from "./config.ts";
import type { DispatcherDeps } from "./deps.ts";
import { dispatchDue } from "./due.ts";
import { dropEndpoint } from "./endpointDeleted.ts";
import { fanOut } from "./fanOut.ts";
import { dispatcherMetrics } from "./metrics.ts";
import { runReplay } from "./replay.ts";
import { delayTiers } from "./retries.ts";
import { recordResults } from "./successes.ts";
import { startSweeper } from "./sweeper.ts";

export type Dispatcher = {
  deps: DispatcherDeps;
  start(): Promise<void>;
  /** Stops consuming, finishes the messages in hand, then closes connections. */
  stop(): Promise<void>;
  healthServer(): Server | null;
};

export function createDispatcher(config: DispatcherConfig, logger: Logger, registry: Registry): Dispatcher {
  const prisma = createPrisma({ databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
  const broker = new Broker({
    url: config.amqpUrl,
    prefix: config.amqpPrefix,
    logger,
    delaysMs: delayTiers(config.retrySchedule),
  });
  const pool = createPool(config.databaseUrl, config.databasePoolSize);
  const deps: DispatcherDeps = {
    pool,
    prisma,
    broker,
    config,
    logger,
    metrics: dispatcherMetrics(registry, broker),
  };
  const queues = broker.topology.queues;
  let stopSweeper: (() => Promise<void>) | null = null;
  let health: Server | null = null;

  return {
    deps,
    healthServer: () => health,
    async start() {
      health = await startHealthServer(
        config.healthPort,
        config.healthHost,
        async () => ({
          database: await prisma.$queryRaw`SELECT 1`.then(
            () => true,
            () => false,
          ),
          broker: await broker.ping(),
        }),
        registry,
      );
      await broker.start(5000);
      const batch = { maxSize: config.batchSize, maxWaitMs: config.batchWaitMs };
      await broker.consumeBatch(
        queues.dispatcherEvents,
        { name: "event.created.v1", handler: (m) => fanOut(deps, m), ...batch },
        config.prefetch,
      );
      await broker.consumeBatch(
        queues.dispatcherResults,
        { name: "attempt.completed.v1", handler: (m) => recordResults(deps, m), ...batch },
        config.prefetch,
      );
      await broker.consume(
        queues.dispatcherRetries,
        { "retry.due.v1": (m) => dispatchDue(deps, [m.body.attempt_id]) },
        config.prefetch,
      );
      await broker.consume(
        queues.dispatcherControl,
        {
          "endpoint.deleted.v1": (m) => dropEndpoint(deps, m.body),
          "replay.requested.v1": (m) => runReplay(deps, m.body),
        },
        // Replays run long; a few at a time keeps deletions from queueing behind them.
        4,
      );
      stopSweeper = startSweeper(deps);
    },
    async stop() {
      await broker.stopConsuming();
      await stopSweeper?.();
      await broker.close();
      await prisma.$disconnect();
      await pool.end();
      if (health) await closeServer(health);
    },
  };
}
