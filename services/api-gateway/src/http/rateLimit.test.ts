import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rateLimit.ts";

const size = (limiter: RateLimiter) => (limiter as unknown as { buckets: Map<string, unknown> }).buckets.size;

describe("the rate limiter", () => {
  it("lets a key burst two seconds' worth, then refuses it with Retry-After, and no other key", () => {
    const limiter = new RateLimiter(5);
    for (let i = 0; i < 10; i++) limiter.take("a", 0);
    expect(() => limiter.take("a", 0)).toThrow(expect.objectContaining({ status: 429 }));
    expect(() => limiter.take("b", 0)).not.toThrow();
    expect(() => limiter.take("a", 200)).not.toThrow();
  });

  it("answers the seconds to wait instead of throwing, taking nothing then", () => {
    const limiter = new RateLimiter(1);
    expect([limiter.tryTake("a", 0), limiter.tryTake("a", 0)]).toEqual([0, 0]);
    expect(limiter.tryTake("a", 0)).toBe(1);
    // The refusal took no token: one second on, one is there.
    expect(limiter.tryTake("a", 1000)).toBe(0);
    expect(new RateLimiter(0).tryTake("a", 0)).toBe(0);
  });

  it("takes a token of each of several keys at once, or of none when one is short", () => {
    const limiter = new RateLimiter(1);
    expect([limiter.tryTake("acct", 0), limiter.tryTake("acct", 0)]).toEqual([0, 0]);
    expect(limiter.tryTakeEach(["acct", "session"], 0)).toBe(1);
    // The refusal took nothing of the session's bucket: its whole burst is there.
    expect([0, 0, 0].map(() => limiter.tryTake("session", 0))).toEqual([0, 0, 1]);
    // A second on, the account has one again: taken with the other session's.
    expect(limiter.tryTakeEach(["acct", "other"], 1000)).toBe(0);
    expect(limiter.tryTake("acct", 1000)).toBe(1);
    expect(limiter.tryTake("other", 1000)).toBe(0);
  });

  it("stays within its buckets when every key is busy, and keeps the busy key's count", () => {
    const limiter = new RateLimiter(5, 10);
    for (let i = 0; i < 10; i++) limiter.take("busy", 0);
    // Thousands of new keys in the same instant, none refilled: the oldest make room.
    for (let i = 0; i < 5000; i++) limiter.take(`session${i}`, 0);
    expect(size(limiter)).toBeLessThanOrEqual(10);
    // A key still in the map keeps what it spent.
    const fresh = new RateLimiter(5, 10);
    for (let i = 0; i < 10; i++) fresh.take("busy", 0);
    for (let i = 0; i < 5; i++) fresh.take(`other${i}`, 0);
    expect(() => fresh.take("busy", 0)).toThrow(expect.objectContaining({ status: 429 }));
  });
});
