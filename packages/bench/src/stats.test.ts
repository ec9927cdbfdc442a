import { describe, expect, it } from "vitest";
import { countInSecond, logHistogram, percentile, perSecond, summarize } from "./stats.ts";

describe("percentile", () => {
  it.each([
    { values: [5], p: 99, expected: 5 },
    { values: [1, 2], p: 50, expected: 1.5 },
    { values: [1, 2, 3, 4, 5], p: 0, expected: 1 },
    { values: [1, 2, 3, 4, 5], p: 50, expected: 3 },
    { values: [1, 2, 3, 4, 5], p: 100, expected: 5 },
    { values: [1, 2, 3, 4, 5], p: 95, expected: 4.8 },
    { values: [10, 20, 30, 40], p: 25, expected: 17.5 },
  ])("p$p of $values is $expected", ({ values, p, expected }) => {
    expect(percentile(values, p)).toBeCloseTo(expected, 10);
  });

  it("is NaN for no values", () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe("summarize", () => {
  it("sorts, and orders p50 ≤ p95 ≤ p99 ≤ max", () => {
    const values = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000);
    const s = summarize(values);
    expect(s).toMatchObject({ count: 1000, min: 0, max: 999, mean: 499.5 });
    expect(s.p50).toBeCloseTo(499.5, 10);
    expect(s.p95).toBeCloseTo(949.05, 10);
    expect(s.p99).toBeCloseTo(989.01, 10);
  });

  it("leaves its input alone", () => {
    const values = [3, 1, 2];
    summarize(values);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe("logHistogram", () => {
  it("puts every value in one bin, bins contiguous, empty ones included", () => {
    const bins = logHistogram([1, 1.1, 5, 100, 0], 10);
    expect(bins.reduce((n, b) => n + b.count, 0)).toBe(5);
    for (let i = 1; i < bins.length; i++) expect(bins[i]!.from).toBeCloseTo(bins[i - 1]!.to, 10);
    expect(bins[0]!.from).toBeCloseTo(0.1, 10);
    expect(bins.at(-1)!.to).toBeCloseTo(10 ** 2.1, 10);
    expect(bins.some((b) => b.count === 0)).toBe(true);
  });

  it("is empty for no values", () => {
    expect(logHistogram([])).toEqual([]);
  });
});

describe("rates", () => {
  it("perSecond rounds to 0.1", () => {
    expect(perSecond(1000, 3000)).toBe(333.3);
    expect(perSecond(5, 0)).toBe(0);
  });

  it("countInSecond grows the series", () => {
    const counts: number[] = [];
    for (const at of [0, 999, 1000, 3500, -5]) countInSecond(counts, at);
    expect(counts).toEqual([3, 1, 0, 1]);
  });
});
