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
    if (this.buckets.size >= this.maxBuckets && !this.buckets.has(key)) this.makeRoom(now);
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

  private sweptAt = Number.NEGATIVE_INFINITY;

  /**
   * Keeps the map bounded. Drops the buckets that have refilled (a new one is the same), in one
   * pass a second at most: one account making portal sessions by the thousand must not make every
   * request walk them all. Between passes, or when none has refilled, the oldest goes.
   */
  private makeRoom(now: number): void {
    if (now - this.sweptAt >= 1000) {
      this.sweptAt = now;
      const capacity = this.perSecond * 2;
      for (const [key, b] of this.buckets)
        if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= capacity) this.buckets.delete(key);
    }
    if (this.buckets.size >= this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
  }
}

/** The gateway's limiters: each account's, and each portal session's apart from its account's. */
export type Limiters = { account: RateLimiter; portal: RateLimiter };
