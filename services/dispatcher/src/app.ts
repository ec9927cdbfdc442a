import type { Server } from "node:http";
import { Broker } from "@herald/broker";
import { createPrisma } from "@herald/db";
import { closeServer, type Logger, type Registry, startHealthServer } from "@herald/runtime";
import type { DispatcherConfig } from "./config.ts";
import type { DispatcherDeps } from "./deps.ts";
import { dispatchDue } from "./due.ts";
import { dropEndpoint } from "./endpointDeleted.ts";
import { fanOut } from "./fanOut.ts";
import { dispatcherMetrics } from "./metrics.ts";
import { runReplay } from "./replay.ts";
import { recordResult } from "./results.ts";
import { delayTiers } from "./retries.ts";
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
  const deps: DispatcherDeps = {
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
      await broker.consume(
        queues.dispatcherEvents,
        { "event.created.v1": (m) => fanOut(deps, m.body) },
        config.prefetch,
      );
      await broker.consume(
        queues.dispatcherResults,
        { "attempt.completed.v1": (m) => recordResult(deps, m.body) },
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
      if (health) await closeServer(health);
    },
  };
}
