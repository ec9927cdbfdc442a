import {
  createLogger,
  createRegistry,
  onShutdown,
  onStartFailure,
  type Shutdown,
  startTelemetry,
} from "@herald/runtime";
import { createDispatcher } from "./app.ts";
import { loadConfig } from "./config.ts";

const telemetry = startTelemetry("dispatcher");
const logger = createLogger("dispatcher");
let shutdown: Shutdown | undefined;
try {
  const config = loadConfig();
  const dispatcher = createDispatcher(config, logger, createRegistry("dispatcher"));
  shutdown = onShutdown(logger, [
    { name: "dispatcher", close: () => dispatcher.stop() },
    { name: "telemetry", close: () => telemetry.shutdown() },
  ]);
  await dispatcher.start();
  logger.info({ retrySchedule: config.retrySchedule, healthPort: config.healthPort }, "dispatcher consuming");
} catch (err) {
  onStartFailure(logger, "dispatcher", err, shutdown);
}
