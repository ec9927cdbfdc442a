import { ApiError } from "./errors.ts";

/**
 * A token bucket per key (an account, or a portal session), in this gateway process:
 * `perSecond` tokens a second, bursts up to two seconds' worth. With several gateway replicas
 * each enforces its own share.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly maxBuckets = 100_000,
  ) {}

  take(key: string, now = Date.now()): void {
    if (this.perSecond <= 0) return;
    const capacity = this.perSecond * 2;
    if (this.buckets.size >= this.maxBuckets && !this.buckets.has(key)) this.forgetFull(now);
    const bucket = this.buckets.get(key) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
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

  /** Drops the buckets that have refilled: a new one is the same. Keeps the map bounded. */
  private forgetFull(now: number): void {
    const capacity = this.perSecond * 2;
    for (const [key, b] of this.buckets)
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= capacity) this.buckets.delete(key);
  }
}

/** The gateway's limiters: each account's, and each portal session's apart from its account's. */
export type Limiters = { account: RateLimiter; portal: RateLimiter };
