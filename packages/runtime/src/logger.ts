import { trace } from "@opentelemetry/api";
import { type Logger, pino } from "pino";
import { ConfigReader } from "./config.ts";

export type { Logger };

/** Paths never written to a log line: credentials and signing material. */
export const redactPaths = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "authorization",
  "secret",
  "secrets",
  "*.secret",
  "*.secrets",
  "api_key",
  "*.api_key",
  "key",
  "*.key",
];

/** Each line written inside a span carries its trace and span ids. */
function traceFields(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext)
    ? { trace_id: spanContext.traceId, span_id: spanContext.spanId }
    : {};
}

/**
 * The service's logger, at LOG_LEVEL. Made before the service's config is read, so that a bad
 * config can be logged: an invalid LOG_LEVEL logs at `info` here, and the config names it.
 */
export function createLogger(
  service: string,
  level: string = new ConfigReader(process.env).logLevel(),
): Logger {
  return pino({
    level,
    base: { service },
    mixin: traceFields,
    redact: { paths: redactPaths, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
