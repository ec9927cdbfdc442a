import { createLogger, type Logger } from "./logger.ts";
import { createRegistry, type Registry } from "./metrics.ts";
import { onShutdown, onStartFailure, type Shutdown } from "./shutdown.ts";
import { startTelemetry } from "./telemetry.ts";

/** What a service's `main` hands `runService`: how to start it, and how to stop it. */
export type ServiceParts = {
  /** Starts taking work; resolves to the line to log once it does, which tests and people wait for. */
  start: () => Promise<{ msg: string; fields: Record<string, unknown> }>;
  /** Stops taking work and finishes what is in flight. */
  stop: () => Promise<void>;
  /** The longest the stop may take before the process exits anyway (30 s by default). */
  stopDeadlineMs?: number;
};

/**
 * A service's life as its process: telemetry first, then the service `make` builds from its
 * config, a graceful shutdown on SIGTERM (the service, then telemetry), and a start that fails
 * (bad config, a broker that does not answer) exiting 1, or 0 when a SIGTERM cut it short.
 */
export async function runService(
  service: string,
  make: (logger: Logger, registry: Registry) => ServiceParts,
): Promise<void> {
  const telemetry = startTelemetry(service);
  const logger = createLogger(service);
  let shutdown: Shutdown | undefined;
  try {
    const parts = make(logger, createRegistry(service));
    shutdown = onShutdown(
      logger,
      [
        { name: service, close: parts.stop },
        { name: "telemetry", close: () => telemetry.shutdown() },
      ],
      parts.stopDeadlineMs,
    );
    const ready = await parts.start();
    logger.info(ready.fields, ready.msg);
  } catch (err) {
    onStartFailure(logger, service, err, shutdown);
  }
}
