import { describe, expect, it } from "vitest";
import type { ProfileResults } from "./results.ts";
import { checkTargets } from "./targets.ts";

type Beside = { transformed: number; plain: number; lost?: [number, number] };

/**
 * The figures checkTargets reads: the plain ten at 1,000 deliveries/s, each variant at its rate,
 * and transformed beside plain at its two rates (absent: results from before the scenario).
 */
function run(variants: Record<string, number>, beside?: Beside | null): Omit<ProfileResults, "targets"> {
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
  const loop = (rate: number, lost: number) => ({ deliveriesPerSecond: rate, lost });
  return {
    endToEnd: [
      endToEnd("1 endpoint", 500),
      endToEnd("10 endpoints", 1000),
      ...Object.entries(variants).map(([name, rate]) => endToEnd(name, rate)),
    ],
    ...(beside === undefined
      ? {}
      : {
          transformedBesidePlain: beside && {
            transformed: loop(beside.transformed, beside.lost?.[0] ?? 0),
            plain: loop(beside.plain, beside.lost?.[1] ?? 0),
          },
        }),
    latency: [latency(200), latency(1000)],
    neighbour: { healthy: { p99Ms: 40, lost: 0 } },
    sustained: null,
    memory: [],
  } as unknown as Omit<ProfileResults, "targets">;
}

const check = (checks: ReturnType<typeof checkTargets>, name: string) => checks.find((c) => c.name === name);
const BESIDE = "end-to-end, transformed beside plain";

describe("checkTargets", () => {
  it("holds each filtered ten to 0.9 × the plain ten of the same run", () => {
    const checks = checkTargets(run({ "10 endpoints, each filtered": 950 }));
    expect(check(checks, "end-to-end, 10 endpoints, each filtered ÷ unfiltered")).toEqual({
      name: "end-to-end, 10 endpoints, each filtered ÷ unfiltered",
      target: "≥ 0.9 × the unfiltered 10",
      value: "0.95 × (950/s)",
      pass: true,
    });
  });

  it("holds the ten each transformed to no ratio against the plain ten, only to delivering all", () => {
    const checks = checkTargets(
      run({ "10 endpoints, each transformed": 330 }, { transformed: 950, plain: 1000 }),
    );
    expect(check(checks, "end-to-end, 10 endpoints, each transformed ÷ unfiltered")).toBeUndefined();
    expect(check(checks, "end-to-end, 10 endpoints, each transformed")).toMatchObject({ pass: true });
  });

  it("holds the transformed endpoint to 0.9 × the plain one beside it, none lost on either", () => {
    expect(check(checkTargets(run({}, { transformed: 950, plain: 1000 })), BESIDE)).toEqual({
      name: BESIDE,
      target: "≥ 0.9 × the plain endpoint's deliveries/s, none lost",
      value: "0.95 × (950/s beside 1,000/s), 0 lost",
      pass: true,
    });
    expect(check(checkTargets(run({}, { transformed: 850, plain: 1000 })), BESIDE)).toMatchObject({
      value: "0.85 × (850/s beside 1,000/s), 0 lost",
      pass: false,
    });
    for (const lost of [
      [1, 0],
      [0, 3],
    ] as [number, number][])
      expect(check(checkTargets(run({}, { transformed: 1000, plain: 1000, lost })), BESIDE)).toMatchObject({
        value: `1.00 × (1,000/s beside 1,000/s), ${lost[0] + lost[1]} lost`,
        pass: false,
      });
    // A plain loop that delivered nothing gives no ratio to meet.
    expect(check(checkTargets(run({}, { transformed: 10, plain: 0 })), BESIDE)).toMatchObject({
      value: "– × (10/s beside 0/s), 0 lost",
      pass: false,
    });
  });

  it("marks what an older build's API refused, or results from before a scenario, as not run", () => {
    const checks = checkTargets(run({}, null));
    expect(check(checks, "end-to-end, 10 endpoints, each filtered ÷ unfiltered")).toMatchObject({
      value: "not run",
      pass: null,
    });
    expect(check(checks, BESIDE)).toMatchObject({ value: "not run", pass: null });
    expect(check(checkTargets(run({})), BESIDE)).toMatchObject({ value: "not run", pass: null });
  });
});
