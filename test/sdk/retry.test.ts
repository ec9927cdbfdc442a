import { describe, expect, it } from "vitest";
import {
  backoffMs,
  isRetryableStatus,
  MAX_DELAY_MS,
  retryAfterMs,
  retryDelayForResponse,
} from "../../packages/sdk/src/retry.ts";

describe("the SDK's retry policy", () => {
  it("retries 429, 5xx and a 409 with Retry-After (a key still in progress), never another 4xx", () => {
    for (const status of [429, 500, 502, 503, 504])
      expect(isRetryableStatus(status), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 413, 415, 422])
      expect(isRetryableStatus(status)).toBe(false);
    expect(retryDelayForResponse(409, null, 0)).toBeNull();
    expect(retryDelayForResponse(409, "1", 0)).toBe(1000);
    expect(retryDelayForResponse(400, "1", 0)).toBeNull();
  });

  it("backs off exponentially, between half and all of 500 ms × 2^n, up to 8 s", () => {
    const table = [
      [0, 250, 500],
      [1, 500, 1000],
      [2, 1000, 2000],
      [3, 2000, 4000],
      [4, 4000, 8000],
      [10, 4000, 8000],
    ];
    for (const [retry, low, high] of table) {
      expect(backoffMs(retry!, () => 0)).toBe(low);
      expect(backoffMs(retry!, () => 1)).toBe(high);
    }
    expect(backoffMs(30, Math.random)).toBeLessThanOrEqual(MAX_DELAY_MS);
  });

  it("reads Retry-After as seconds or an HTTP date, and prefers it to the backoff up to 60 s", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(retryAfterMs("1", now)).toBe(1000);
    expect(retryAfterMs("2.5", now)).toBe(2500);
    expect(retryAfterMs("Sat, 21 Nov 2026 10:00:03 GMT", now)).toBe(3000);
    expect(retryAfterMs("Sat, 21 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
    expect(retryDelayForResponse(429, "2", 3, () => 0, now)).toBe(2000);
    expect(retryDelayForResponse(503, "60", 0, () => 0, now)).toBe(60_000);
    expect(retryDelayForResponse(429, "61", 0, () => 0, now)).toBeNull();
    expect(retryDelayForResponse(500, null, 1, () => 0, now)).toBe(500);
  });
});
