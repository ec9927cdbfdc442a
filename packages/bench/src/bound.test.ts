import { describe, expect, it } from "vitest";
import { boundOf, bounds, COSTS } from "./bound.ts";

const ceilings = {
  httpPostsPerSecond: 20_000,
  rabbitmqMessagesPerSecond: 10_000,
  postgresInsertsPerSecond: 1,
};

describe("the design's bound", () => {
  it("adds up the machine's time each unit costs at the ceilings", () => {
    // 1/20,000 s + 1/10,000 s per event: 6,667 events/s.
    const ingest = boundOf("ingest", COSTS.ingest, ceilings);
    expect(ingest.perSecond).toBeCloseTo(20_000 / 3, 6);
    expect(ingest.ratioToHttp).toBeCloseTo(1 / 3, 9);
  });

  it("shares the event's POST and message among its endpoints", () => {
    const [, one, ten] = bounds(ceilings);
    // 2 POSTs and 3 messages per delivery with 1 endpoint; 1.1 and 2.1 with 10.
    expect(one!.perSecond).toBeCloseTo(1 / (2 / 20_000 + 3 / 10_000), 6);
    expect(ten!.perSecond).toBeCloseTo(1 / (1.1 / 20_000 + 2.1 / 10_000), 6);
    expect(ten!.perSecond).toBeGreaterThan(one!.perSecond);
  });
});
