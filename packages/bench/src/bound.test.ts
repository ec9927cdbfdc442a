import { EVENTS_PER_MESSAGE as E, RESULTS_PER_MESSAGE as R } from "@herald/contracts";
import { describe, expect, it } from "vitest";
import { boundOf, bounds, COSTS } from "./bound.ts";

const ceilings = {
  httpPostsPerSecond: 20_000,
  rabbitmqMessagesPerSecond: 10_000,
  postgresInsertsPerSecond: 1,
};

describe("the design's bound", () => {
  it("adds up the machine's time each unit costs at the ceilings", () => {
    // 1/20,000 s + 1/10,000 s a unit: 6,667 a second.
    const unit = boundOf("one of each", { http: 1, messages: 1 }, ceilings);
    expect(unit.perSecond).toBeCloseTo(20_000 / 3, 6);
    expect(unit.ratioToHttp).toBeCloseTo(1 / 3, 9);
    // An event's POST and its share of a message of E events.
    const ingest = boundOf("ingest", COSTS.ingest, ceilings);
    expect(ingest.perSecond).toBeCloseTo(1 / (1 / 20_000 + 1 / E / 10_000), 6);
  });

  it("shares the event's POST and message among its endpoints", () => {
    const [, one, ten] = bounds(ceilings);
    // 2 POSTs per delivery with 1 endpoint, 1.1 with 10; an attempt request each, and shares of
    // a message of R results and one of E events.
    expect(one!.perSecond).toBeCloseTo(1 / (2 / 20_000 + (1 + 1 / R + 1 / E) / 10_000), 6);
    expect(ten!.perSecond).toBeCloseTo(1 / (1.1 / 20_000 + (1 + 1 / R + 1 / (10 * E)) / 10_000), 6);
    expect(ten!.perSecond).toBeGreaterThan(one!.perSecond);
  });
});
