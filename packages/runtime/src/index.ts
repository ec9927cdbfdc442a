export { ConfigError, ConfigReader, type Env, parseDuration } from "./config.ts";
export { closeServer, type ReadinessCheck, startHealthServer } from "./health.ts";
export { createLogger, type Logger, redactPaths } from "./logger.ts";
export { type Closer, onShutdown } from "./shutdown.ts";
