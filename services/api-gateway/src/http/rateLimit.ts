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

  /** Takes a token of `key`'s bucket, or throws 429 `rate_limited` with Retry-After. */
  take(key: string, now = Date.now()): void {
    const retryAfter = this.tryTake(key, now);
    if (retryAfter)
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

  /**
   * Takes a token of `key`'s bucket and answers 0, or answers the whole seconds until one is
   * there (at least 1) and takes none: for a caller that refuses in words of its own.
   */
  tryTake(key: string, now = Date.now()): number {
    return this.tryTakeEach([key], now);
  }

  /**
   * Takes a token of each of `keys`' buckets (a portal session's and its account's) and answers
   * 0, or answers the whole seconds until each has one (at least 1) and takes none: a request
   * one bucket refuses costs the others nothing.
   */
  tryTakeEach(keys: readonly string[], now = Date.now()): number {
    if (this.perSecond <= 0) return 0;
    const capacity = this.perSecond * 2;
    const tokens = keys.map((key) => {
      const bucket = this.buckets.get(key);
      return bucket
        ? Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond)
        : capacity;
    });
    const short = Math.min(...tokens);
    // Refused before any bucket is made: refusals by the thousand (of sessions by the thousand)
    // make no room, so never push out the account's own bucket, which would refill it.
    if (short < 1) return Math.max(1, Math.ceil((1 - short) / this.perSecond));
    keys.forEach((key, i) => {
      if (this.buckets.size >= this.maxBuckets && !this.buckets.has(key)) this.makeRoom(now);
      this.buckets.set(key, { tokens: tokens[i]! - 1, at: now });
    });
    return 0;
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

/**
 * The gateway's limiters of requests: each account's, and each portal session's apart from its
 * account's. (Compiles and try-its of transformations have one more, `Deps.transformLimiter`.)
 */
export type Limiters = { account: RateLimiter; portal: RateLimiter };
