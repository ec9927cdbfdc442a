import { describe, expect, it } from "vitest";
import { DeliveryTracker } from "./tracker.ts";

describe("DeliveryTracker", () => {
  const window = { start: 1000, end: 4000 };

  it("counts each delivery once, whichever of the 201 and the arrival comes first", async () => {
    const t = new DeliveryTracker(2, window);
    t.arrive("evt_1", "/a/0", 1100); // before its 201
    t.accept("evt_1", 1150);
    t.arrive("evt_1", "/a/1", 1200);
    t.arrive("evt_1", "/a/1", 1300); // a duplicate
    await t.delivered("evt_1");
    t.accept("evt_2", 2000);
    t.arrive("evt_2", "/a/0", 2010);
    expect(t.drained()).toBe(false);
    const c = t.counts(0.5);
    expect(c).toMatchObject({ expected: 4, arrived: 3, lost: 1, duplicates: 1, arrivedInWindow: 3 });
    expect(c.latenciesMs.sort((a, b) => a - b)).toEqual([0, 10, 50]);
    expect(c.perSecond).toEqual([0, 2, 1]);
  });

  it("drains once every accepted event reached every endpoint", () => {
    const t = new DeliveryTracker(1, window);
    t.accept("evt_1", 500);
    expect(t.drained()).toBe(false);
    t.arrive("evt_1", "/a/0", 600);
    expect(t.drained()).toBe(true);
    // Outside the window: counted as delivered, not as in the window, and no latency.
    expect(t.counts(0)).toMatchObject({
      expected: 1,
      arrived: 1,
      lost: 0,
      arrivedInWindow: 0,
      latenciesMs: [],
    });
  });

  it("wakes a closed-loop slot when the last endpoint receives the event", async () => {
    const t = new DeliveryTracker(2, window);
    t.accept("evt_1", 1000);
    let done = false;
    const waiting = t.delivered("evt_1").then(() => {
      done = true;
    });
    t.arrive("evt_1", "/a/0", 1001);
    await Promise.resolve();
    expect(done).toBe(false);
    t.arrive("evt_1", "/a/1", 1002);
    await waiting;
    expect(done).toBe(true);
  });
});
