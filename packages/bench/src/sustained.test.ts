import { describe, expect, it } from "vitest";
import { type BacklogSample, backlogSampler, backlogVerdict, perSecondRatio, slope } from "./sustained.ts";

const sample = (atSeconds: number, backlog: number, accepted = 0, delivered = 0): BacklogSample => ({
  atSeconds,
  phase: "measure",
  accepted,
  delivered,
  queued: 0,
  open: backlog,
  backlog,
});

describe("slope", () => {
  it("is the least-squares slope", () => {
    expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 5 + 2 * x })))).toBeCloseTo(2, 9);
    expect(
      slope([
        { x: 0, y: 1 },
        { x: 1, y: 3 },
        { x: 2, y: 2 },
      ]),
    ).toBeCloseTo(0.5, 9);
    expect(slope([{ x: 1, y: 1 }])).toBe(0);
  });
});

describe("backlogVerdict", () => {
  const window = { from: 3, to: 63 };

  it("calls a backlog that wavers around a level bounded", () => {
    const samples = Array.from({ length: 64 }, (_, t) => sample(t, 40 + (t % 2 ? 15 : -15)));
    const v = backlogVerdict(samples, window, 700);
    expect(v).toMatchObject({
      min: 25,
      max: 55,
      tailSeconds: 20,
      tailSamples: 21,
      limitPerSecond: 14,
      bounded: true,
    });
    expect(Math.abs(v.slopePerSecond)).toBeLessThan(1);
  });

  it("calls a backlog that grows by more than 2 % of the offered rate each second growing", () => {
    // 700 offered, 20 a second more waiting: the system keeps up with 97 %.
    const samples = Array.from({ length: 64 }, (_, t) => sample(t, 10 + 20 * t));
    const v = backlogVerdict(samples, window, 700);
    expect(v.slopePerSecond).toBeCloseTo(20, 6);
    expect(v.bounded).toBe(false);
    expect(v).toMatchObject({ min: 70, max: 1270, last: 1270 });
  });

  it("takes the trend over the window's last half when it is shorter than 40 s", () => {
    // Grows during the first half, then holds: bounded.
    const samples = Array.from({ length: 12 }, (_, t) => sample(t, t < 6 ? 100 * t : 500));
    const v = backlogVerdict(samples, { from: 1, to: 11 }, 700);
    expect(v).toMatchObject({ tailSeconds: 5, tailSamples: 6, slopePerSecond: 0, bounded: true, max: 500 });
    // Samples outside the window (the warm-up, the drain) do not count.
    expect(v.min).toBe(100);
  });

  it("gives no verdict on too few samples", () => {
    expect(backlogVerdict([sample(3, 5), sample(4, 6)], { from: 3, to: 4 }, 100).bounded).toBeNull();
  });
});

describe("perSecondRatio", () => {
  it("is each second's deliveries over its accepted events", () => {
    expect(
      perSecondRatio([
        sample(0, 0, 0, 0),
        sample(1, 0, 100, 90),
        sample(2, 0, 200, 200),
        sample(3, 0, 200, 200),
      ]),
    ).toEqual([0.9, 1.1, 0]);
  });
});

describe("backlogSampler", () => {
  it("pairs each second's totals with the backlog read then, skipping a second while a read runs", async () => {
    let release: () => void = () => {};
    const reads: Promise<void>[] = [];
    const sampler = backlogSampler(() => {
      const gate = new Promise<void>((r) => {
        release = r;
      });
      reads.push(gate);
      return gate.then(() => ({ queued: 2, open: 3 }));
    });
    sampler.hooks.onTick!({ atMs: 1003, phase: "measure", totals: { accepted: 10, arrived: 9 } });
    sampler.hooks.onTick!({ atMs: 2001, phase: "measure", totals: { accepted: 20, arrived: 19 } });
    release();
    await reads[0];
    await new Promise((r) => setTimeout(r, 0));
    expect(sampler.samples()).toEqual([
      { atSeconds: 1, phase: "measure", accepted: 10, delivered: 9, queued: 2, open: 3, backlog: 5 },
    ]);
    expect(reads).toHaveLength(1);
  });
});

describe("backlogVerdict over a longer tail", () => {
  it("takes the trend over the window's second half when asked for more than 20 s", () => {
    // Grows by 1 a second for 140 s, then holds: the last 20 s say bounded, the last half growing.
    const samples = Array.from({ length: 161 }, (_, t) => sample(t, Math.min(t, 140)));
    const window = { from: 0, to: 160 };
    expect(backlogVerdict(samples, window, 20).bounded).toBe(true);
    const long = backlogVerdict(samples, window, 20, Number.POSITIVE_INFINITY);
    expect(long).toMatchObject({ tailSeconds: 80, tailSamples: 81, limitPerSecond: 0.4, bounded: false });
  });
});
