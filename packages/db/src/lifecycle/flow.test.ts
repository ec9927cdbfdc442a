import { describe, expect, it } from "vitest";
import { admit, afterResult, type Flow, type FlowSettings, freshFlow, probeBackoff } from "./flow.ts";

const s: FlowSettings = {
  maxInFlight: 10,
  breakerAfter: 5,
  probeAfterMs: 1000,
  probeAfterMaxMs: 8000,
  pauseMaxMs: 60_000,
  slowDownMs: 30_000,
  fifoFanOutWaitMs: 10_000,
};
const t0 = new Date("2026-11-24T00:00:00.000Z");
const later = (ms: number) => new Date(t0.getTime() + ms);

function flow(over: Partial<Flow> = {}): Flow {
  return { ...freshFlow("ep_1"), ...over };
}
const open = { rate_limit: null, max_in_flight: null };
const unreachable = (attemptId: string, ms: number) => ({
  attemptId,
  succeeded: false,
  responseStatus: null,
  error: "timeout",
  retryAfterMs: null,
  completedAt: later(ms),
});
const answered = (status: number, ms: number, retryAfterMs: number | null = null) => ({
  attemptId: `a${ms}`,
  succeeded: status < 300,
  responseStatus: status,
  error: status < 300 ? null : "http_error",
  retryAfterMs,
  completedAt: later(ms),
});
/** A destination beyond HTTP (a queue, a bucket) took the message: a success with no status. */
const acknowledged = (attemptId: string, ms: number) => ({
  attemptId,
  succeeded: true,
  responseStatus: null,
  error: null,
  retryAfterMs: null,
  completedAt: later(ms),
});

describe("admit", () => {
  it("lets go up to the in-flight limit, then holds the rest until results make room", () => {
    const f = flow();
    expect(admit(f, open, 4, 20, t0, s)).toMatchObject({ take: 6, heldBy: "max_in_flight" });
    // The endpoint's own limit lowers the default, never raises it.
    expect(admit(f, { rate_limit: null, max_in_flight: 8 }, 4, 20, t0, s)).toMatchObject({
      take: 4,
      heldBy: "max_in_flight",
    });
    expect(admit(f, { rate_limit: null, max_in_flight: 50 }, 4, 20, t0, s)).toMatchObject({
      take: 6,
      heldBy: "max_in_flight",
    });
    expect(admit(f, open, 10, 3, t0, s)).toMatchObject({ take: 0, heldBy: "max_in_flight" });
    expect(admit(f, open, 10, 0, t0, s)).toEqual({ take: 0, probe: false, heldBy: null, retryAt: null });
  });

  it("spends a token per attempt, a second's worth at most, and says when the next is back", () => {
    const f = flow();
    const limits = { rate_limit: 5, max_in_flight: 100 };
    const first = admit(f, limits, 0, 100, t0, s);
    expect(first).toMatchObject({ take: 5, heldBy: "rate_limit" });
    expect(first.retryAt).toEqual(later(200));
    // 100 ms later: half a token, none to spend.
    expect(admit(f, limits, 5, 95, later(100), s)).toMatchObject({ take: 0, retryAt: later(200) });
    expect(admit(f, limits, 5, 95, later(200), s)).toMatchObject({ take: 1 });
    // An hour idle refills one second's worth, no more.
    expect(admit(f, limits, 0, 100, later(3_600_000), s).take).toBe(5);
  });

  it("holds everything while paused, and lets one probe go when a breaker's pause ends", () => {
    const f = flow({ pause_reason: "not_responding", paused_until: later(1000), opens: 1 });
    expect(admit(f, open, 0, 50, t0, s)).toMatchObject({ take: 0, heldBy: "paused", retryAt: later(1000) });
    expect(admit(f, open, 0, 50, later(1000), s)).toMatchObject({ take: 1, probe: true, heldBy: "paused" });
    f.probe_attempt_id = "probe";
    expect(admit(f, open, 1, 49, later(1100), s)).toMatchObject({ take: 0, probe: false, heldBy: "paused" });
  });

  it("ends a Retry-After pause and a slow-down when their time is up", () => {
    const f = flow({
      pause_reason: "retry_after",
      paused_until: later(3000),
      limit_now: 2,
      slow_until: later(5000),
    });
    expect(admit(f, open, 0, 5, later(2999), s).take).toBe(0);
    expect(admit(f, open, 0, 5, later(3000), s).take).toBe(2);
    expect(f.pause_reason).toBeNull();
    expect(admit(f, open, 0, 20, later(5000), s).take).toBe(10);
    expect(f.limit_now).toBeNull();
  });
});

describe("afterResult", () => {
  it("opens the breaker after breakerAfter unreachable attempts in a row; any answer resets the run", () => {
    const f = flow();
    for (let i = 1; i <= 4; i++) expect(afterResult(f, unreachable(`a${i}`, i), open, s)).toBeNull();
    expect(afterResult(f, answered(500, 5), open, s)).toBeNull();
    expect(f.failures).toBe(0);
    for (let i = 6; i <= 9; i++) afterResult(f, unreachable(`a${i}`, i), open, s);
    expect(afterResult(f, unreachable("a10", 10), open, s)).toEqual({
      endpointId: "ep_1",
      change: "paused",
      reason: "not_responding",
      until: later(1010),
    });
    // Attempts already out that fail later change nothing more.
    expect(afterResult(f, unreachable("a11", 11), open, s)).toBeNull();
    expect(f.paused_until).toEqual(later(1010));
  });

  it("counts a transformation that fails as unreachable: the endpoint's, and as sure to fail again", () => {
    const f = flow();
    const broken = (i: number) => ({ ...unreachable(`t${i}`, i), error: "transformation_error" });
    for (let i = 1; i <= 4; i++) expect(afterResult(f, broken(i), open, s)).toBeNull();
    expect(afterResult(f, broken(5), open, s)).toMatchObject({ change: "paused", reason: "not_responding" });
  });

  it("takes a transformation not run for busy workers as Herald's, not the endpoint's: the run neither grows nor ends", () => {
    const f = flow();
    for (let i = 1; i <= 4; i++) afterResult(f, unreachable(`a${i}`, i), open, s);
    for (let i = 5; i <= 20; i++)
      expect(
        afterResult(f, { ...unreachable(`b${i}`, i), error: "transformation_busy" }, open, s),
      ).toBeNull();
    expect(f.failures).toBe(4);
    expect(f.pause_reason).toBeNull();
  });

  it("takes a cancelled attempt (no request made) as neither an answer nor unreachable", () => {
    const f = flow();
    for (let i = 1; i <= 4; i++) afterResult(f, unreachable(`a${i}`, i), open, s);
    const cancelled = { ...unreachable("c5", 5), error: null, cancelled: true };
    expect(afterResult(f, cancelled, open, s)).toBeNull();
    // The run of four goes on: the next unreachable one is the fifth, and opens the breaker.
    expect(f.failures).toBe(4);
    expect(afterResult(f, unreachable("a6", 6), open, s)).toMatchObject({ change: "paused" });

    // A cancelled probe neither closes the breaker nor pauses it again: the next release probes.
    const paused = flow({
      pause_reason: "not_responding",
      paused_until: later(0),
      opens: 1,
      probe_attempt_id: "p1",
    });
    expect(afterResult(paused, { ...cancelled, attemptId: "p1" }, open, s)).toBeNull();
    expect(paused).toMatchObject({ pause_reason: "not_responding", paused_until: later(0), opens: 1 });
    expect(admit(paused, open, 0, 3, later(10), s)).toMatchObject({ take: 1, probe: true });
  });

  it("takes a success without a status (a destination beyond HTTP) as an answer too", () => {
    const f = flow();
    for (let i = 1; i <= 4; i++) afterResult(f, unreachable(`a${i}`, i), open, s);
    expect(afterResult(f, acknowledged("a5", 5), open, s)).toBeNull();
    expect(f.failures).toBe(0);
    // Four more in a row are a run of four, not of eight: the breaker stays closed.
    for (let i = 6; i <= 9; i++) expect(afterResult(f, unreachable(`a${i}`, i), open, s)).toBeNull();
    expect(f).toMatchObject({ failures: 4, pause_reason: null, paused_until: null });

    // Its probe acknowledged, an open breaker closes.
    const paused = flow({
      pause_reason: "not_responding",
      paused_until: later(0),
      opens: 1,
      probe_attempt_id: "p1",
    });
    expect(afterResult(paused, acknowledged("p1", 100), open, s)).toMatchObject({ change: "resumed" });
    expect(paused).toMatchObject({ pause_reason: null, paused_until: null, opens: 0, failures: 0 });
  });

  it("takes a destination's refusal without a status (rejected: a nack, an error reply) as an answer", () => {
    const f = flow();
    for (let i = 1; i <= 4; i++) afterResult(f, unreachable(`a${i}`, i), open, s);
    const refused = { ...unreachable("r5", 5), error: "rejected" };
    expect(afterResult(f, refused, open, s)).toBeNull();
    expect(f.failures).toBe(0);
    const paused = flow({
      pause_reason: "not_responding",
      paused_until: later(0),
      opens: 1,
      probe_attempt_id: "p1",
    });
    expect(afterResult(paused, { ...refused, attemptId: "p1" }, open, s)).toMatchObject({
      change: "resumed",
    });
  });

  it("pauses again for longer when the probe fails, and resumes on any answer", () => {
    const f = flow({
      pause_reason: "not_responding",
      paused_until: later(0),
      opens: 1,
      probe_attempt_id: "p1",
    });
    f.next_release_at = later(0);
    expect(afterResult(f, unreachable("p1", 100), open, s)).toMatchObject({
      change: "paused",
      until: later(2100),
    });
    expect(f.opens).toBe(2);
    f.probe_attempt_id = "p2";
    expect(afterResult(f, answered(503, 3000), open, s)).toMatchObject({ change: "resumed" });
    expect(f).toMatchObject({ pause_reason: null, paused_until: null, opens: 0, probe_attempt_id: null });
    expect(f.next_release_at).toEqual(later(3000));
  });

  it("doubles the probe backoff up to its cap", () => {
    expect([0, 1, 2, 3, 4, 40].map((n) => probeBackoff(n, s))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it("pauses the endpoint on a 429 or 503 with Retry-After, capped", () => {
    const f = flow();
    expect(afterResult(f, answered(429, 0, 3000), open, s)).toMatchObject({
      change: "paused",
      reason: "retry_after",
      until: later(3000),
    });
    expect(afterResult(f, answered(503, 10, 86_400_000), open, s)?.until).toEqual(later(60_010));
    // A shorter one does not cut a longer pause short.
    expect(afterResult(f, answered(429, 20, 1000), open, s)).toBeNull();
    expect(f.paused_until).toEqual(later(60_010));
  });

  it("halves the in-flight limit for a while on a 429, 502 or 504 without Retry-After", () => {
    const f = flow();
    expect(afterResult(f, answered(429, 0), open, s)).toMatchObject({
      change: "slowed",
      until: later(30_000),
    });
    expect(f.limit_now).toBe(5);
    afterResult(f, answered(502, 1), open, s);
    afterResult(f, answered(504, 2), open, s);
    afterResult(f, answered(504, 3), open, s);
    expect(f.limit_now).toBe(1);
    expect(admit(f, open, 0, 10, later(4), s).take).toBe(1);
    expect(afterResult(f, answered(500, 5), open, s)).toBeNull();
  });
});
