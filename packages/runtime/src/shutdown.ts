import type { Logger } from "pino";

export type Closer = { name: string; close: () => Promise<void> | void };

/**
 * Graceful shutdown: the first SIGTERM or SIGINT runs the closers in order (stop taking work,
 * finish in-flight work, then close connections in reverse order of opening); a second
 * signal, or the deadline passing, forces the exit.
 */
export function onShutdown(logger: Logger, closers: Closer[], deadlineMs = 30_000): () => Promise<void> {
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
  return run;
}
