import { ApiError } from "./errors.ts";

/**
 * A token bucket per account, in this gateway process: `perSecond` tokens a second, bursts up
 * to two seconds' worth. With several gateway replicas each enforces its own share.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly perSecond: number) {}

  take(account: string, now = Date.now()): void {
    if (this.perSecond <= 0) return;
    const capacity = this.perSecond * 2;
    const bucket = this.buckets.get(account) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(account, bucket);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
      throw new ApiError(
        429,
        "rate_limit_error",
        "rate_limited",
        "Too many requests. Slow down and retry after the time in Retry-After.",
        undefined,
        undefined,
        {
          "Retry-After": String(retryAfter),
        },
      );
    }
    bucket.tokens -= 1;
  }
}
