import { describe, expect, it } from "vitest";
import { FORGET_MS, SoakTracker } from "./soakTracker.ts";

describe("SoakTracker", () => {
  const window = { start: 1000, end: 1000 + 10 * FORGET_MS };

  it("hands over each 201 and each delivery with its latency once, then forgets the event", () => {
    const t = new SoakTracker(1, window);
    t.accept("evt_1", 1100);
    t.arrive("evt_1", "/a/0", 1130);
    t.arrive("evt_2", "/a/0", 1200); // before its 201: latency 0, stamped at the 201
    t.accept("evt_2", 1210);
    t.accept("evt_3", 1300);
    expect(t.take()).toEqual({ accepted: [1100, 1210, 1300], arrived: [1130, 1210], latenciesMs: [30, 0] });
    expect(t.take()).toEqual({ accepted: [], arrived: [], latenciesMs: [] });
    expect(t.openEvents()).toBe(1);
    expect(t.drained()).toBe(false);
    t.arrive("evt_3", "/a/0", 1400);
    expect(t.drained()).toBe(true);
    expect(t.openEvents()).toBe(0);
    expect(t.take()).toEqual({ accepted: [], arrived: [1400], latenciesMs: [100] });
    expect(t.counts(0)).toMatchObject({
      expected: 3,
      arrived: 3,
      lost: 0,
      duplicates: 0,
      arrivedInWindow: 3,
      latenciesMs: [],
    });
    expect(t.arrivals()).toBe(3);
  });

  it("counts a duplicate of a done event as one while it remembers the id", () => {
    const t = new SoakTracker(2, window);
    t.accept("evt_1", 1000);
    t.arrive("evt_1", "/a/0", 1010);
    t.arrive("evt_1", "/a/0", 1020); // while open
    t.arrive("evt_1", "/a/1", 1030);
    t.arrive("evt_1", "/a/1", 1040 + FORGET_MS); // done, still remembered
    expect(t.counts(0)).toMatchObject({ expected: 2, arrived: 2, duplicates: 2, unmatched: 0 });
    expect(t.take().latenciesMs).toEqual([10, 30]);
    expect(t.openEvents()).toBe(0);
  });

  it("keeps no more than the open events: arrivals that never get a 201 are dropped as unmatched", () => {
    const t = new SoakTracker(1, window);
    for (let i = 0; i < 1000; i++) {
      const at = 1000 + i * 300; // 5 minutes of events, each delivered 5 ms after its 201
      t.accept(`evt_${i}`, at);
      t.arrive(`evt_${i}`, "/a/0", at + 5);
    }
    expect(t.openEvents()).toBe(0);
    t.arrive("evt_stray", "/a/0", 400_000);
    expect(t.openEvents()).toBe(1);
    t.accept("evt_late", 400_000 + 2 * FORGET_MS);
    expect(t.openEvents()).toBe(1); // the stray is gone, the late one waits for its delivery
    expect(t.counts(0)).toMatchObject({ expected: 1001, lost: 1, unmatched: 1 });
  });

  it("counts the deliveries lost: accepted and never arrived", () => {
    const t = new SoakTracker(1, window);
    t.accept("evt_1", 1500);
    t.accept("evt_2", 1600);
    t.arrive("evt_2", "/a/0", 1700);
    expect(t.counts(2.5)).toMatchObject({ expected: 2, arrived: 1, lost: 1, drainSeconds: 2.5 });
  });
});
