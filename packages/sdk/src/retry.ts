/**
 * When to try a request again, and how long to wait first. Pure, so tests can pin them down.
 *
 * Retried: no answer at all (connection refused or reset, a timeout), 429, 5xx, and a 409 that
 * says when to retry (another request with the same Idempotency-Key is still in progress, or its
 * outcome is still being stored after a database outage). Never any other 4xx: the same request
 * would fail the same way. POSTs carry an Idempotency-Key, the same
 * on every retry, so a retry of a request that did reach the server does nothing twice.
 */
export const INITIAL_DELAY_MS = 500;
export const MAX_DELAY_MS = 8_000;
/** A Retry-After longer than this is not waited for: the error goes to the caller, who decides. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function isRetryableStatus(status: number, retryAfter: string | null = null): boolean {
  return status === 429 || status >= 500 || (status === 409 && retryAfter !== null);
}

/**
 * `Retry-After` in milliseconds: delay-seconds (`1`, `2.5`) or an HTTP date. Null when absent
 * or unreadable.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Exponential backoff with jitter before retry number `retry` (0 for the first retry):
 * 500 ms, 1 s, 2 s, 4 s, then 8 s at most, each between half and all of that at random, so
 * clients that failed together do not come back together.
 */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_DELAY_MS, INITIAL_DELAY_MS * 2 ** retry);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * How long to wait before retrying a response with `status`, or null when it must not be retried.
 * The server's Retry-After wins over the backoff, when it is within MAX_RETRY_AFTER_MS.
 */
export function retryDelayForResponse(
  status: number,
  retryAfter: string | null,
  retry: number,
  random: () => number = Math.random,
  now = Date.now(),
): number | null {
  if (!isRetryableStatus(status, retryAfter)) return null;
  const asked = retryAfterMs(retryAfter, now);
  if (asked === null) return backoffMs(retry, random);
  return asked <= MAX_RETRY_AFTER_MS ? asked : null;
}
