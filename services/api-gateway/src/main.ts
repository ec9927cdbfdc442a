import {
  createLogger,
  createRegistry,
  onShutdown,
  onStartFailure,
  type Shutdown,
  startTelemetry,
} from "@herald/runtime";
import { createGateway } from "./app.ts";
import { loadConfig } from "./config.ts";

const telemetry = startTelemetry("api-gateway");
const logger = createLogger("api-gateway");
let shutdown: Shutdown | undefined;
try {
  const config = loadConfig();
  const gateway = createGateway(config, logger, createRegistry("api-gateway"));
  shutdown = onShutdown(logger, [
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
  onStartFailure(logger, "api-gateway", err, shutdown);
}
