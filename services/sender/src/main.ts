import { runService } from "@herald/runtime";
import { createSender } from "./app.ts";
import { loadConfig } from "./config.ts";

void runService("sender", (logger, registry) => {
  const config = loadConfig();
  const sender = createSender(config, logger, registry);
  return {
    start: async () => {
      await sender.start();
      const fields = { concurrency: config.concurrency, healthPort: config.healthPort };
      return { msg: "sender consuming", fields };
    },
    // SIGTERM: stop taking attempts, finish those in flight (each bounded by ATTEMPT_TIMEOUT), exit.
    stop: () => sender.stop(),
    stopDeadlineMs: config.attemptTimeoutMs + 15_000,
  };
});
