import { ConfigError, createLogger, createRegistry, onShutdown, startTelemetry } from "@herald/runtime";
import { createGateway } from "./app.ts";
import { loadConfig } from "./config.ts";

const telemetry = startTelemetry("api-gateway");
const logger = createLogger("api-gateway");
try {
  const config = loadConfig();
  const gateway = createGateway(config, logger, createRegistry("api-gateway"));
  onShutdown(logger, [
    { name: "gateway", close: () => gateway.stop() },
    { name: "telemetry", close: () => telemetry.shutdown() },
  ]);
  const server = await gateway.start();
  const address = server.address();
  logger.info(
    { port: typeof address === "object" && address ? address.port : config.port },
    "api-gateway listening",
  );
} catch (err) {
  if (err instanceof ConfigError) logger.fatal(err.message);
  else logger.fatal({ err }, "api-gateway failed to start");
  process.exit(1);
}
