import { ConfigError, createLogger, createRegistry, onShutdown, startTelemetry } from "@herald/runtime";
import { createDispatcher } from "./app.ts";
import { loadConfig } from "./config.ts";

const telemetry = startTelemetry("dispatcher");
const logger = createLogger("dispatcher");
try {
  const config = loadConfig();
  const dispatcher = createDispatcher(config, logger, createRegistry("dispatcher"));
  onShutdown(logger, [
    { name: "dispatcher", close: () => dispatcher.stop() },
    { name: "telemetry", close: () => telemetry.shutdown() },
  ]);
  await dispatcher.start();
  logger.info({ retrySchedule: config.retrySchedule, healthPort: config.healthPort }, "dispatcher consuming");
} catch (err) {
  if (err instanceof ConfigError) logger.fatal(err.message);
  else logger.fatal({ err }, "dispatcher failed to start");
  process.exit(1);
}
