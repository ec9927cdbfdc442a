export {
  ConfigError,
  ConfigReader,
  DEFAULT_AMQP_URL,
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_DATABASE_URL,
  type Env,
  parseDuration,
  parseEncryptionKey,
} from "./config.ts";
export { type Deadline, deadline } from "./deadline.ts";
export { closeServer, type ReadinessCheck, startHealthServer } from "./health.ts";
export { createLogger, type Logger, redactPaths } from "./logger.ts";
export { Counter, createRegistry, Gauge, Histogram, type Registry } from "./metrics.ts";
export { OutageLog } from "./outage.ts";
export { runService, type ServiceParts } from "./service.ts";
export { type Closer, EXIT_CONFIG, onShutdown, onStartFailure, type Shutdown } from "./shutdown.ts";
export {
  annotate,
  type Context,
  context,
  contextFrom,
  exportsTraces,
  inSpan,
  type Span,
  SpanKind,
  SpanStatusCode,
  startTelemetry,
  type Telemetry,
  trace,
  traceHeaders,
  traceIdOf,
  tracer,
} from "./telemetry.ts";
