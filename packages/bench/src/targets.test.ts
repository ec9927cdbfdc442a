import { describe, expect, it } from "vitest";
import type { ProfileResults } from "./results.ts";
import { checkTargets } from "./targets.ts";

/** The figures checkTargets reads: the plain ten at 1,000 deliveries/s, and each variant at its rate. */
function run(variants: Record<string, number>): Omit<ProfileResults, "targets"> {
  const endToEnd = (name: string, rate: number) => ({
    name,
    deliveriesPerSecond: rate,
    deliveredOverAccepted: 1,
    lost: 0,
  });
  const latency = (rate: number) => ({
    rate,
    notSent: 0,
    eventsAcceptedPerSecond: rate,
    p50Ms: 5,
    p99Ms: 20,
  });
  return {
    endToEnd: [
      endToEnd("1 endpoint", 500),
      endToEnd("10 endpoints", 1000),
      ...Object.entries(variants).map(([name, rate]) => endToEnd(name, rate)),
    ],
    latency: [latency(200), latency(1000)],
    neighbour: { healthy: { p99Ms: 40, lost: 0 } },
    sustained: null,
    memory: [],
  } as unknown as Omit<ProfileResults, "targets">;
}

const check = (checks: ReturnType<typeof checkTargets>, name: string) => checks.find((c) => c.name === name)!;

describe("checkTargets", () => {
  it("holds each filtered and each transformed ten to 0.9 × the plain ten of the same run", () => {
    const checks = checkTargets(
      run({ "10 endpoints, each filtered": 950, "10 endpoints, each transformed": 850 }),
    );
    expect(check(checks, "end-to-end, 10 endpoints, each filtered ÷ unfiltered")).toEqual({
      name: "end-to-end, 10 endpoints, each filtered ÷ unfiltered",
      target: "≥ 0.9 × the unfiltered 10",
      value: "0.95 × (950/s)",
      pass: true,
    });
    expect(check(checks, "end-to-end, 10 endpoints, each transformed ÷ unfiltered")).toEqual({
      name: "end-to-end, 10 endpoints, each transformed ÷ unfiltered",
      target: "≥ 0.9 × the unfiltered 10",
      value: "0.85 × (850/s)",
      pass: false,
    });
    // Each scenario is also held to delivered ÷ accepted and none lost, the transformed one too.
    expect(check(checks, "end-to-end, 10 endpoints, each transformed")).toMatchObject({ pass: true });
  });

  it("marks a variant an older build's API refused as not run, neither met nor missed", () => {
    const checks = checkTargets(run({ "10 endpoints, each filtered": 950 }));
    expect(check(checks, "end-to-end, 10 endpoints, each filtered ÷ unfiltered").pass).toBe(true);
    expect(check(checks, "end-to-end, 10 endpoints, each transformed ÷ unfiltered")).toMatchObject({
      value: "not run",
      pass: null,
    });
  });
});
