import { HeraldError } from "./errors.ts";

/** The client's options, their defaults, and the per-call options over them. */
export type HeraldOptions = {
  /** An account's API key (`hk_…`). Default: the HERALD_API_KEY environment variable. */
  apiKey?: string;
  /** Where the gateway answers. Default: HERALD_URL, else http://localhost:8080 (`npm start`). */
  baseUrl?: string;
  /** How long one attempt may take, in ms, reading the body included. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt, on no answer, 429 and 5xx. Default 2. */
  maxRetries?: number;
  /** A fetch of your own (a proxy, instrumentation, tests). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
};

/** Per call, over the client's options. */
export type RequestOptions = {
  timeoutMs?: number;
  maxRetries?: number;
  /** Aborts the call, a retry's wait included; the call then rejects with a HeraldAbortError. */
  signal?: AbortSignal;
  /** POST only: your own Idempotency-Key (1 to 255 characters) instead of a random UUID. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
};

export const DEFAULT_BASE_URL = "http://localhost:8080";
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 2;

/** The client's options with their defaults filled in, checked. */
export type Config = Required<Omit<HeraldOptions, "headers">> & { headers: Record<string, string> };

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] || undefined;

export function resolveOptions(options: HeraldOptions): Config {
  const apiKey = options.apiKey ?? env("HERALD_API_KEY");
  if (!apiKey) throw new HeraldError("No API key: pass `apiKey` or set HERALD_API_KEY.");
  const baseUrl = (options.baseUrl ?? env("HERALD_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  if (!URL.canParse(baseUrl)) throw new HeraldError(`baseUrl is not a URL: "${baseUrl}".`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new HeraldError(`timeoutMs must be above 0, got ${timeoutMs}.`);
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (!Number.isInteger(maxRetries) || maxRetries < 0)
    throw new HeraldError(`maxRetries must be a whole number from 0, got ${maxRetries}.`);
  const fetchFn = options.fetch ?? globalThis.fetch;
  return { apiKey, baseUrl, timeoutMs, maxRetries, fetch: fetchFn, headers: options.headers ?? {} };
}
