import { describe, expect, it } from "vitest";
import {
  MINUTE_MS,
  MinuteBuckets,
  minuteCounts,
  minuteHeader,
  minuteLine,
  type SoakMinute,
  soakVerdict,
  verdictLine,
} from "./soakFigures.ts";
import { backlogVerdict } from "./sustained.ts";

const WARM = 3000;
/** ms since the job started of second `s` of minute `m` (1-based) of the soak. */
const at = (m: number, s: number) => WARM + (m - 1) * MINUTE_MS + s * 1000;

describe("minuteCounts", () => {
  it("takes the minute's p50 and p99 of its deliveries, and delivered ÷ accepted", () => {
    // 1 to 100 ms: p50 interpolates to 50.5, p99 to 99.01.
    const latencies = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(minuteCounts(3, 125, latencies)).toEqual({
      minute: 3,
      accepted: 125,
      delivered: 100,
      deliveredOverAccepted: 0.8,
      p50Ms: 50.5,
      p99Ms: 99.01,
    });
  });

  it("has no percentiles for a minute nothing arrived in, nor a ratio for one nothing was accepted in", () => {
    expect(minuteCounts(1, 0, [])).toMatchObject({
      delivered: 0,
      deliveredOverAccepted: null,
      p50Ms: null,
      p99Ms: null,
    });
  });
});

describe("MinuteBuckets", () => {
  it("sorts samples into the soak's minutes by their time, leaving the warm-up and what follows out", () => {
    const b = new MinuteBuckets(WARM, 2);
    b.add({
      accepted: [WARM - 1, at(1, 0), at(1, 59.9), at(2, 0), at(3, 0)],
      arrived: [WARM - 1, at(1, 10), at(1, 20), at(2, 30), at(3, 1)],
      latenciesMs: [999, 10, 30, 20, 999],
    });
    expect(b.close(at(1, 59.9))).toEqual([]);
    expect(b.close(at(2, 0))).toEqual([minuteCounts(1, 2, [10, 30])]);
    expect(b.close(at(3, 5))).toEqual([minuteCounts(2, 1, [20])]);
    // Every minute closed: nothing more.
    expect(b.close(at(9, 0))).toEqual([]);
  });

  it("closes every minute a late report passed, in order", () => {
    const b = new MinuteBuckets(WARM, 5);
    b.add({ accepted: [at(1, 1), at(3, 1)], arrived: [], latenciesMs: [] });
    expect(b.close(at(4, 0)).map((m) => [m.minute, m.accepted])).toEqual([
      [1, 1],
      [2, 0],
      [3, 1],
    ]);
  });

  it("puts a sample for a minute already closed into the first open one", () => {
    const b = new MinuteBuckets(WARM, 3);
    b.close(at(2, 0));
    b.add({ accepted: [at(1, 59.99)], arrived: [at(1, 59.99)], latenciesMs: [7] });
    expect(b.close(at(3, 0))).toEqual([minuteCounts(2, 1, [7])]);
  });
});

const minute = (m: number, rss: Record<string, number | null>, p99Ms: number | null): SoakMinute => ({
  minute: m,
  accepted: 6000,
  delivered: 5990,
  deliveredOverAccepted: 0.9983,
  p50Ms: 20,
  p99Ms,
  queued: 3,
  open: 12,
  backlog: 15,
  rssMb: rss,
  summedRssMb: {},
});

describe("soakVerdict", () => {
  it("sets each process's RSS and the p99 of the first minute against the last", () => {
    const backlog = backlogVerdict([], { from: 3, to: 183 }, 500);
    const v = soakVerdict(
      [
        minute(1, { "api-gateway": 120.4, sender: 98, postgres: 310, rabbitmq: null }, 40),
        minute(2, { "api-gateway": 121, sender: 97, postgres: 320, rabbitmq: null }, 41),
        minute(3, { "api-gateway": 131.2, sender: 96.5, postgres: 330.5, rabbitmq: null }, 55),
      ],
      backlog,
    );
    expect(v.rss).toEqual([
      { name: "api-gateway", firstMb: 120.4, lastMb: 131.2, growthMb: 10.8 },
      { name: "sender", firstMb: 98, lastMb: 96.5, growthMb: -1.5 },
      { name: "postgres", firstMb: 310, lastMb: 330.5, growthMb: 20.5 },
      { name: "rabbitmq", firstMb: null, lastMb: null, growthMb: null },
    ]);
    expect(v.p99).toEqual({ firstMs: 40, lastMs: 55 });
    expect(v.backlog).toBe(backlog);
    const line = verdictLine(v, 3);
    expect(line).toContain("minute 1 → 3");
    expect(line).toContain("api-gateway 120 → 131 MB (+10.8)");
    expect(line).toContain("sender 98 → 97 MB (-1.5)");
    expect(line).toContain("rabbitmq – → – MB;");
    expect(line).toContain("p99 40.0 → 55.0 ms (1.38×)");
    expect(line).toContain("backlog: too few samples");
  });

  it("is empty for a soak that ended before its first minute", () => {
    const v = soakVerdict([], backlogVerdict([], { from: 0, to: 1 }, 1));
    expect(v.rss).toEqual([]);
    expect(v.p99).toEqual({ firstMs: null, lastMs: null });
  });
});

describe("minuteLine", () => {
  it("lines each minute up under the header, one column per process", () => {
    const names = ["api-gateway", "dispatcher", "postgres"];
    const header = minuteHeader(names);
    const row = minuteLine(
      minute(12, { "api-gateway": 150.2, dispatcher: null, postgres: 401.7 }, 88.25),
      names,
    );
    expect(row.length).toBe(header.length);
    expect(row.split(/\s+/)).toEqual([
      "12",
      "6000",
      "5990",
      "0.998",
      "20.0",
      "88.3",
      "15",
      "150",
      "–",
      "402",
    ]);
    expect(header.split(/\s+/)).toContain("api-gateway");
  });
});
