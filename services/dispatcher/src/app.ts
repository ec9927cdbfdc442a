import type { Server } from "node:http";
import { Broker, isTransientBrokerError } from "@herald/broker";
import { isTransientDbError } from "@herald/db/errors";
import { delayTiers } from "@herald/db/lifecycle";
import { DatabaseOutage } from "@herald/db/outage";
import { createPool } from "@herald/db/pool";
import { closeServer, type Logger, type Registry, startHealthServer } from "@herald/runtime";
import { ByteBudget } from "./byteBudget.ts";
import type { DispatcherConfig } from "./config.ts";
import { deleteApp } from "./deleteApp.ts";
import type { DispatcherDeps } from "./deps.ts";
import { dropEndpoint, eraseEvent } from "./dropOpen.ts";
import { fanOut } from "./fanOut.ts";
import { startMaintenance } from "./maintenance.ts";
import { dispatcherMetrics } from "./metrics.ts";
import { PUBLISH_BUDGET_BYTES } from "./publishAttempts.ts";
import { recordResults } from "./recordResults.ts";
import { startReleasing } from "./releaseAttempts.ts";
import { runReplay } from "./runReplay.ts";
import { sendDue } from "./sendDue.ts";
import { startSweeper } from "./sweeper.ts";

export type Dispatcher = {
  deps: DispatcherDeps;
  start(): Promise<void>;
  /** Stops consuming, finishes the messages in hand, then closes connections. */
  stop(): Promise<void>;
  healthServer(): Server | null;
};

/**
 * The dispatcher: the stages of a delivery's lifecycle, each consuming its queue. In the order
 * of the flow: fanOut (events to deliveries) → releaseAttempts (through each endpoint's
 * limits to the senders; the rest wait for the gate's poll) → recordResults (their outcomes,
 * and retries to the delay queues) → sendDue (retries that came due), beside dropEndpoint,
 * eraseEvent, deleteApp and runReplay, the sweeper and the maintenance (retention).
 */
export function createDispatcher(config: DispatcherConfig, logger: Logger, registry: Registry): Dispatcher {
  // A pass that failed because the broker is away is the broker's outage, which it logs.
  const dbOutage: DatabaseOutage = new DatabaseOutage(
    logger,
    (err: unknown): boolean => !broker.connected && isTransientBrokerError(err),
  );
  const db = createPool(config.databaseUrl, config.databasePoolSize, dbOutage);
  const broker: Broker = new Broker({
    url: config.amqpUrl,
    prefix: config.amqpPrefix,
    logger,
    delaysMs: delayTiers(config.retrySchedule),
    isTransient: isTransientDbError,
    outage: dbOutage,
  });
  const deps: DispatcherDeps = {
    db,
    dbOutage,
    broker,
    config,
    logger,
    metrics: dispatcherMetrics(registry, broker),
    publishBudget: new ByteBudget(PUBLISH_BUDGET_BYTES),
  };
  let stopSweeper: (() => Promise<void>) | null = null;
  let stopReleasing: (() => Promise<void>) | null = null;
  let stopMaintenance: (() => Promise<void>) | null = null;
  let health: Server | null = null;
  // Ready once every queue is consumed, not at the broker's connection: a pod is sent no
  // traffic, and its SIGTERM cannot cut a start short, before then.
  let consuming = false;

  return {
    deps,
    healthServer: () => health,
    async start() {
      health = await startHealthServer(
        config.healthPort,
        config.healthHost,
        async () => ({
          database: await db.query("SELECT 1").then(
            () => true,
            () => false,
          ),
          broker: await broker.ping(),
          consuming,
        }),
        registry,
      );
      await broker.start(5000);
      // Two batches handled at once, as many as the prefetch holds by default.
      // A batch due while both retry (a database outage) goes after 100 ms beside them.
      const batch = {
        maxSize: config.batchSize,
        maxWaitMs: config.batchWaitMs,
        maxRunning: 2,
        maxHoldMs: 100,
      };
      // Messages of several events or results: sized so that the items in hand, and in one
      // transaction, stay near what DISPATCHER_PREFETCH and DISPATCHER_BATCH give one a message.
      const perBatchMessage = 16;
      const batches = {
        ...batch,
        maxSize: Math.max(1, Math.ceil(config.batchSize / perBatchMessage)),
      };
      const batchPrefetch = Math.max(2, Math.ceil(config.prefetch / perBatchMessage));
      await broker.consumeBatch(
        "dispatcherEvents",
        { handler: (m) => fanOut(deps, m), ...batch },
        config.prefetch,
      );
      await broker.consumeBatch(
        "dispatcherEventBatches",
        { handler: (m) => fanOut(deps, m), ...batches },
        batchPrefetch,
      );
      await broker.consumeBatch(
        "dispatcherResults",
        { handler: (m) => recordResults(deps, m), ...batch },
        config.prefetch,
      );
      await broker.consumeBatch(
        "dispatcherResultBatches",
        { handler: (m) => recordResults(deps, m), ...batches },
        batchPrefetch,
      );
      await broker.consume(
        "dispatcherRetries",
        { "retry.due.v1": (m) => sendDue(deps, [m.body.attempt_id]) },
        config.prefetch,
      );
      await broker.consume(
        "dispatcherControl",
        {
          "endpoint.deleted.v1": (m) => dropEndpoint(deps, m.body),
          "event.erased.v1": (m) => eraseEvent(deps, m.body),
          "app.deleted.v1": (m) => deleteApp(deps, m.body),
          "replay.requested.v1": (m) => runReplay(deps, m.body),
        },
        // Replays and app deletions run long; a few at a time keeps the rest from queueing behind them.
        4,
      );
      stopSweeper = startSweeper(deps);
      stopReleasing = startReleasing(deps);
      stopMaintenance = startMaintenance(deps);
      consuming = true;
    },
    async stop() {
      consuming = false;
      await broker.stopConsuming();
      await stopSweeper?.();
      await stopReleasing?.();
      await stopMaintenance?.();
      await broker.close();
      await db.end();
      if (health) await closeServer(health);
    },
  };
}
