import { describe, expect, it } from "vitest";
import { alternation, compareRuns, figuresOf, mean } from "./compare.ts";
import type { ProfileResults } from "./results.ts";

describe("alternation", () => {
  it("runs each profile's rounds base then change, profile after profile", () => {
    expect(alternation(["lean", "deployed"], 2).map((s) => `${s.profile} ${s.build} ${s.round}`)).toEqual([
      "lean base 1",
      "lean change 1",
      "lean base 2",
      "lean change 2",
      "deployed base 1",
      "deployed change 1",
      "deployed base 2",
      "deployed change 2",
    ]);
  });
});

describe("mean", () => {
  it("averages the values there are", () => {
    expect(mean([1, 3])).toBe(2);
    expect(mean([1, null])).toBe(1);
    expect(mean([null, null])).toBeNull();
  });
});

/** The figures compareRuns reads, of a run with `rate` deliveries/s end to end and ingest twice that. */
/**
 * Without `variants`, a build whose API refused filters and transformations: no such scenarios,
 * and results as written before transformed beside plain (no such field at all).
 */
function run(rate: number, cpuMs: number, variants = true): ProfileResults {
  const latency = { rate: 200, eventsAcceptedPerSecond: 200, p50Ms: 10, p95Ms: 20, p99Ms: 30 };
  const endToEnd = (name: string) => ({
    name,
    deliveriesPerSecond: rate,
    deliveredOverAccepted: 1,
    lost: 0,
    disk: null,
    cpu: {
      windowSeconds: 3,
      deliveries: 3 * rate,
      parts: [{ name: "api-gateway", cpuMs: 0, perDeliveryMs: cpuMs / 2 }],
      wholeStack: { name: "whole stack", cpuMs: 0, perDeliveryMs: cpuMs },
      cores: 1,
      missed: 0,
      lost: 0,
    },
  });
  return {
    profile: "lean",
    ingest: { eventsPerSecond: 2 * rate },
    endToEnd: [
      endToEnd("1 endpoint"),
      ...(variants
        ? [endToEnd("10 endpoints, each filtered"), endToEnd("10 endpoints, each transformed")]
        : []),
    ],
    ...(variants
      ? {
          transformedBesidePlain: {
            transformed: { deliveriesPerSecond: 0.9 * rate, p50Ms: 12, p99Ms: 30, lost: 0 },
            plain: { deliveriesPerSecond: rate, p50Ms: 10, p99Ms: 25, lost: 0 },
            transformedOverPlain: { deliveriesPerSecond: 0.9, p50: 1.2 },
          },
        }
      : {}),
    latency: [latency],
    neighbour: { healthy: { p50Ms: 10, p99Ms: 40, lost: 0 }, hanging: { lost: 0, mostInFlight: 8 } },
    sustained: {
      rate: rate * 0.8,
      deliveredOverAccepted: 1,
      backlog: { max: 50, last: 10, slopePerSecond: cpuMs - 5 },
      p50Ms: 20,
      p99Ms: 40,
      lost: 0,
      cpu: null,
    },
    memory: [{ service: "sender", peakMb: 100 }],
  } as unknown as ProfileResults;
}

describe("compareRuns", () => {
  it("puts each round of both builds side by side, with change ÷ base of their means", () => {
    const c = compareRuns("lean", [
      { build: "base", round: 1, results: run(400, 4) },
      { build: "change", round: 1, results: run(600, 2) },
      { build: "base", round: 2, results: run(600, 6) },
      { build: "change", round: 2, results: run(900, 2) },
    ]);
    const row = (name: string) => c.rows.find((r) => r.name === name)!;
    expect(row("end-to-end, 1 endpoint")).toMatchObject({
      unit: "deliveries/s",
      better: "higher",
      base: [400, 600],
      change: [600, 900],
      baseMean: 500,
      changeMean: 750,
      ratio: 1.5,
    });
    expect(row("CPU per delivery, end-to-end, 1 endpoint: whole stack")).toMatchObject({
      base: [4, 6],
      change: [2, 2],
      ratio: 0.4,
    });
    expect(row("ingest").ratio).toBe(1.5);
    expect(row("peak memory, sender").ratio).toBe(1);
    // A trend may be below zero: its ratio would mean nothing.
    expect(row("sustained: backlog trend")).toMatchObject({ base: [-1, 1], change: [-3, -3], ratio: null });
    expect(c.rows.map((r) => r.name)).toEqual(figuresOf(run(1, 1)).map((f) => f.name));
  });

  it("keeps a figure only one build has, with no ratio", () => {
    const c = compareRuns("lean", [
      { build: "base", round: 1, results: run(400, 4, false) },
      { build: "change", round: 1, results: run(600, 2) },
    ]);
    for (const variant of ["filtered", "transformed"]) {
      const row = c.rows.find((r) => r.name === `end-to-end, 10 endpoints, each ${variant}`)!;
      expect(row).toMatchObject({ base: [null], change: [600], baseMean: null, ratio: null });
      const cpu = c.rows.find(
        (r) => r.name === `CPU per delivery, end-to-end, 10 endpoints, each ${variant}: whole stack`,
      )!;
      expect(cpu).toMatchObject({ base: [null], change: [2], ratio: null });
    }
    // The base's results have no transformed-beside-plain field: its rows are the change's alone.
    const row = (name: string) => c.rows.find((r) => r.name === name)!;
    expect(row("transformed beside plain, transformed")).toMatchObject({
      unit: "deliveries/s",
      better: "higher",
      base: [null],
      change: [540],
      ratio: null,
    });
    expect(row("transformed beside plain, plain: p50")).toMatchObject({ base: [null], change: [10] });
    expect(row("transformed beside plain, transformed ÷ plain")).toMatchObject({
      better: "higher",
      change: [0.9],
      ratio: null,
    });
    expect(row("transformed beside plain, transformed ÷ plain: p50")).toMatchObject({
      better: "lower",
      change: [1.2],
    });
  });

  it("reads results from before transformed beside plain, or where it was refused (null)", () => {
    const old = run(400, 4, false);
    expect("transformedBesidePlain" in old).toBe(false);
    const refused = { ...old, transformedBesidePlain: null };
    for (const r of [old, refused])
      expect(figuresOf(r).filter((f) => f.name.startsWith("transformed beside plain"))).toEqual([]);
    const c = compareRuns("lean", [
      { build: "base", round: 1, results: old },
      { build: "change", round: 1, results: refused },
    ]);
    expect(c.rows.find((r) => r.name === "end-to-end, 1 endpoint")?.ratio).toBe(1);
  });
});
