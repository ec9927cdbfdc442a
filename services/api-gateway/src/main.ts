import { runService } from "@herald/runtime";
import { createGateway } from "./app.ts";
import { loadConfig } from "./config.ts";

void runService("api-gateway", (logger, registry) => {
  const config = loadConfig();
  const gateway = createGateway(config, logger, registry);
  return {
    start: async () => {
      const address = (await gateway.start()).address();
      const port = typeof address === "object" && address ? address.port : config.port;
      return { msg: "api-gateway listening", fields: { port } };
    },
    stop: () => gateway.stop(),
  };
});
