import { type Logger, pino } from "pino";

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

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    base: { service },
    redact: { paths: redactPaths, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
