import {
  createLogger,
  createRegistry,
  onShutdown,
  onStartFailure,
  type Shutdown,
  startTelemetry,
} from "@herald/runtime";
import { createSender } from "./app.ts";
import { loadConfig } from "./config.ts";

const telemetry = startTelemetry("sender");
const logger = createLogger("sender");
let shutdown: Shutdown | undefined;
try {
  const config = loadConfig();
  const sender = createSender(config, logger, createRegistry("sender"));
  // SIGTERM: stop taking attempts, finish those in flight (each bounded by ATTEMPT_TIMEOUT), exit.
  shutdown = onShutdown(
    logger,
    [
      { name: "sender", close: () => sender.stop() },
      { name: "telemetry", close: () => telemetry.shutdown() },
    ],
    config.attemptTimeoutMs + 15_000,
  );
  await sender.start();
  logger.info({ concurrency: config.concurrency, healthPort: config.healthPort }, "sender consuming");
} catch (err) {
  onStartFailure(logger, "sender", err, shutdown);
}
