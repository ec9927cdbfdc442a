import type { Logger } from "pino";
import { ConfigError } from "./config.ts";

export type Closer = { name: string; close: () => Promise<void> | void };

export type Shutdown = {
  run(): Promise<void>;
  /** True once a signal began the shutdown: a start that fails then was stopped, not broken. */
  started(): boolean;
};

/**
 * Graceful shutdown: the first SIGTERM or SIGINT runs the closers in order (stop taking work,
 * finish in-flight work, then close connections in reverse order of opening); a second
 * signal, or the deadline passing, forces the exit.
 */
export function onShutdown(logger: Logger, closers: Closer[], deadlineMs = 30_000): Shutdown {
  let running: Promise<void> | null = null;
  const run = (): Promise<void> => {
    running ??= (async () => {
      const timer = setTimeout(() => {
        logger.error({ deadlineMs }, "shutdown deadline passed; exiting now");
        process.exit(1);
      }, deadlineMs);
      timer.unref();
      for (const closer of closers) {
        try {
          await closer.close();
          logger.info({ step: closer.name }, "shutdown step done");
        } catch (err) {
          logger.error({ err, step: closer.name }, "shutdown step failed");
        }
      }
      clearTimeout(timer);
    })();
    return running;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    logger.info({ signal }, "shutting down");
    void run().then(() => process.exit(0));
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return { run, started: () => running !== null };
}

/** The exit status of a start refused for its configuration (EX_CONFIG): restarting will not help. */
export const EXIT_CONFIG = 78;

/**
 * A service's start failed: a configuration error exits EXIT_CONFIG, anything else 1; a start
 * cut short by SIGTERM (a pod stopped while it starts) lets the shutdown finish and exit 0.
 */
export function onStartFailure(logger: Logger, service: string, err: unknown, shutdown?: Shutdown): void {
  if (shutdown?.started()) {
    logger.info(
      { reason: err instanceof Error ? err.message : String(err) },
      `${service} stopped while starting`,
    );
    return;
  }
  if (err instanceof ConfigError) logger.fatal(err.message);
  else logger.fatal({ err }, `${service} failed to start`);
  process.exit(err instanceof ConfigError ? EXIT_CONFIG : 1);
}
