import { runService } from "@herald/runtime";
import { createDispatcher } from "./app.ts";
import { loadConfig } from "./config.ts";

void runService("dispatcher", (logger, registry) => {
  const config = loadConfig();
  const dispatcher = createDispatcher(config, logger, registry);
  return {
    start: async () => {
      await dispatcher.start();
      const fields = { retrySchedule: config.retrySchedule, healthPort: config.healthPort };
      return { msg: "dispatcher consuming", fields };
    },
    stop: () => dispatcher.stop(),
  };
});
