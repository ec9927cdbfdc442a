import { describe, expect, it } from "vitest";
import type { DeliveryCounts, JobResult, RequestCounts, SideBySideJob } from "./protocol.ts";
import { transformedBesidePlainFigures } from "./results.ts";

const ceilings = {
  httpPostsPerSecond: 10_000,
  rabbitmqMessagesPerSecond: 20_000,
  postgresInsertsPerSecond: 5000,
};

/** A side-by-side job of 2 s warm-up and 4 s window, 160 events in flight to each endpoint. */
const job: SideBySideJob = {
  kind: "side-by-side",
  app: "bench_x_one_transformed",
  paths: ["/bench_x_one_transformed/0"],
  label: "1 endpoint, transformed",
  inFlight: 160,
  slotTimeoutMs: 30_000,
  beside: {
    app: "bench_x_one_plain",
    paths: ["/bench_x_one_plain/0"],
    label: "1 endpoint, plain",
    inFlight: 160,
  },
  warmMs: 2000,
  measureMs: 4000,
  drainMs: 10_000,
};

/** One loop's counts: `inWindow` events accepted in the window, `arrivedInWindow` of their deliveries. */
function loop(
  inWindow: number,
  arrivedInWindow: number,
  latenciesMs: number[],
  lost = 0,
): { requests: RequestCounts; deliveries: DeliveryCounts } {
  return {
    requests: {
      measureSeconds: 4,
      inWindow,
      total: inWindow + 100,
      errors: 0,
      errorSamples: [],
      notSent: 0,
      perSecond: [50, 50],
    },
    deliveries: {
      arrivedInWindow,
      expected: inWindow + 100,
      arrived: inWindow + 100 - lost,
      duplicates: 0,
      lost,
      drainSeconds: 0.5,
      perSecond: [40, 60],
      latenciesMs,
    },
  };
}

describe("transformedBesidePlainFigures", () => {
  it("gives each loop its rate, percentiles, delivered ÷ accepted and lost, and transformed ÷ plain", () => {
    const r: JobResult = {
      ...loop(3600, 3600, [10, 20, 30, 40, 50]),
      beside: loop(4000, 3960, [5, 10, 15, 20, 25], 2),
    };
    const f = transformedBesidePlainFigures(job, r, ceilings);
    expect(f.transformed).toMatchObject({
      name: "1 endpoint, transformed",
      endpoints: 1,
      eventsInFlight: 160,
      measureSeconds: 4,
      deliveriesPerSecond: 900,
      eventsAcceptedPerSecond: 900,
      deliveredOverAccepted: 1,
      p50Ms: 30,
      lost: 0,
      cpu: null,
    });
    expect(f.transformed.ratios.http).toBeCloseTo(0.09, 9);
    expect(f.plain).toMatchObject({
      name: "1 endpoint, plain",
      deliveriesPerSecond: 990,
      eventsAcceptedPerSecond: 1000,
      deliveredOverAccepted: 0.99,
      p50Ms: 15,
      lost: 2,
      arrivedPerSecond: [40, 60],
      warmSeconds: 2,
    });
    expect(f.plain.p99Ms).toBeCloseTo(24.8, 2);
    expect(f.transformedOverPlain).toEqual({ deliveriesPerSecond: 0.909, p50: 2 });
  });

  it("leaves a ratio out when the plain loop delivered nothing", () => {
    const r: JobResult = { ...loop(100, 100, [10]), beside: loop(0, 0, []) };
    const f = transformedBesidePlainFigures(job, r, ceilings);
    expect(f.plain.deliveriesPerSecond).toBe(0);
    expect(f.transformedOverPlain).toEqual({ deliveriesPerSecond: null, p50: null });
  });

  it("fails loudly when the job came back without its second loop", () => {
    expect(() => transformedBesidePlainFigures(job, loop(1, 1, [1]), ceilings)).toThrow(/second loop/);
  });
});
