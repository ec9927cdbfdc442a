/**
 * Config helpers: each service declares its variables once in its own config.ts and parses
 * them in main. Every bad value is collected, and the process stops with one message that
 * names each variable and what is wrong with it.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

export type Env = Record<string, string | undefined>;

/**
 * The defaults of the settings every service shares, written once. scripts/lib/setup.mjs,
 * which runs before anything is installed, repeats them; a test keeps the two equal.
 */
export const DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/herald";
export const DEFAULT_AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";
/** 15 s: the attempt timeout Standard Webhooks receivers expect to answer within. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 15_000;
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** 32 bytes, given as 64 hex digits or as base64; null for anything else. */
export function parseEncryptionKey(value: string): Buffer | null {
  // Exactly 32 bytes as 64 hex digits, or as base64 (padded, or base64url unpadded), around
  // which only a file's trailing newline is forgiven. Node's base64 decoder skips what it
  // cannot read, so a typo would otherwise be a different key: each must encode back the same.
  const text = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  for (const [form, encoding] of [
    [/^[A-Za-z0-9+/]{43}=$/, "base64"],
    [/^[A-Za-z0-9_-]{43}$/, "base64url"],
  ] as const) {
    if (!form.test(text)) continue;
    const key = Buffer.from(text, encoding);
    return key.toString(encoding) === text ? key : null;
  }
  return null;
}

export class ConfigReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string, fallback: string): string;
  string(name: string, fallback?: undefined): string | undefined;
  string(name: string, fallback?: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === "" ? fallback : value;
  }

  required(name: string, hint: string): string {
    const value = this.string(name);
    if (value === undefined) {
      this.problems.push(`${name} is required (${hint})`);
      return "";
    }
    return value;
  }

  int(name: string, fallback: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (["true", "1", "yes"].includes(raw)) return true;
    if (["false", "0", "no"].includes(raw)) return false;
    this.problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  }

  url(name: string, fallback: string, protocols: string[]): string {
    const raw = this.string(name, fallback);
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error("protocol");
    } catch {
      this.problems.push(`${name} must be a ${protocols.join(" or ")} URL, got "${raw}"`);
    }
    return raw;
  }

  /** Durations like `500ms`, `5s`, `5m`, `2h`, `5d`; a bare number is milliseconds. */
  duration(name: string, fallback: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const ms = parseDuration(raw);
    if (ms === null) {
      this.problems.push(`${name} must be a duration such as 500ms, 5s, 5m, 2h or 5d, got "${raw}"`);
      return fallback;
    }
    return ms;
  }

  /** DATABASE_URL and DATABASE_POOL_SIZE, read alike by every service that has a database. */
  database(): { databaseUrl: string; databasePoolSize: number } {
    return {
      databaseUrl: this.url("DATABASE_URL", DEFAULT_DATABASE_URL, ["postgres:", "postgresql:"]),
      databasePoolSize: this.int("DATABASE_POOL_SIZE", 10, { min: 1, max: 200 }),
    };
  }

  /** AMQP_URL and AMQP_PREFIX, read alike by every service. */
  broker(): { amqpUrl: string; amqpPrefix: string } {
    return {
      amqpUrl: this.url("AMQP_URL", DEFAULT_AMQP_URL, ["amqp:", "amqps:"]),
      amqpPrefix: this.string("AMQP_PREFIX", "herald"),
    };
  }

  /** HEALTH_PORT and HEALTH_HOST of a service without an HTTP API of its own. */
  health(defaultPort: number): { healthPort: number; healthHost: string } {
    return {
      healthPort: this.int("HEALTH_PORT", defaultPort, { max: 65535 }),
      healthHost: this.string("HEALTH_HOST", "0.0.0.0"),
    };
  }

  /** ATTEMPT_TIMEOUT: the longest one attempt may take, read alike by the dispatcher and senders. */
  attemptTimeout(): number {
    const ms = this.duration("ATTEMPT_TIMEOUT", DEFAULT_ATTEMPT_TIMEOUT_MS);
    this.check(ms >= 1, `ATTEMPT_TIMEOUT must be at least 1ms, got "${this.string("ATTEMPT_TIMEOUT")}"`);
    return Math.max(ms, 1);
  }

  /**
   * How endpoints' transformations run (@herald/transform), the same in the gateway (which
   * compiles them on save and tries them) and the senders (which run them on each attempt).
   */
  transformations(): { workers: number; timeoutMs: number; memoryBytes: number } {
    const timeoutMs = this.duration("TRANSFORMATION_TIMEOUT", 50);
    // At most 1 s: a run a worker cannot interrupt is ended at twice its budget and a second,
    // and others' runs may wait that long; past it they would wait past an attempt's time.
    this.check(timeoutMs >= 1 && timeoutMs <= 1000, "TRANSFORMATION_TIMEOUT must be 1ms to 1s");
    return {
      workers: this.int("TRANSFORMATION_WORKERS", 2, { min: 1, max: 64 }),
      timeoutMs: Math.min(Math.max(timeoutMs, 1), 10_000),
      memoryBytes: this.int("TRANSFORMATION_MEMORY_MB", 16, { min: 1, max: 1024 }) * 1024 * 1024,
    };
  }

  /** ENCRYPTION_KEY, required: the key endpoint secrets are sealed with (`hint` says why here). */
  encryptionKey(hint: string): Buffer {
    const raw = this.required("ENCRYPTION_KEY", hint);
    const key = raw ? parseEncryptionKey(raw) : null;
    if (raw) this.check(key !== null, "ENCRYPTION_KEY must be 32 bytes, base64 or hex encoded");
    return key ?? Buffer.alloc(32);
  }

  /** LOG_LEVEL, one of LOG_LEVELS (default info). */
  logLevel(): LogLevel {
    const raw = this.string("LOG_LEVEL", "info");
    if ((LOG_LEVELS as readonly string[]).includes(raw)) return raw as LogLevel;
    this.problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${raw}"`);
    return "info";
  }

  check(condition: boolean, problem: string): void {
    if (!condition) this.problems.push(problem);
  }

  /** Throws one ConfigError listing every problem found. */
  done(): void {
    if (this.problems.length) throw new ConfigError(this.problems);
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(raw: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
  if (!match) return null;
  return Math.round(Number(match[1]) * UNITS[match[2] ?? "ms"]!);
}
