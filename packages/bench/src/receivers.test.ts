import { afterEach, describe, expect, it, vi } from "vitest";
import { Hold } from "./receivers.ts";

describe("Hold (a hanging endpoint)", () => {
  afterEach(() => vi.useRealTimers());

  it("answers each request after its hold, counting the most held at once", () => {
    vi.useFakeTimers();
    const hold = new Hold(10_000);
    const answered: number[] = [];
    hold.answer(() => answered.push(1));
    vi.advanceTimersByTime(4000);
    hold.answer(() => answered.push(2));
    hold.answer(() => answered.push(3));
    expect(hold.mostInFlight).toBe(3);
    vi.advanceTimersByTime(6000);
    expect(answered).toEqual([1]);
    hold.answer(() => answered.push(4));
    // Two held again at most since the first went: the peak stays 3.
    expect(hold.mostInFlight).toBe(3);
    vi.advanceTimersByTime(4000);
    expect(answered).toEqual([1, 2, 3]);
    vi.advanceTimersByTime(6000);
    expect(answered).toEqual([1, 2, 3, 4]);
  });

  it("answers what it holds on release, once each, and later requests at once", () => {
    vi.useFakeTimers();
    const hold = new Hold(10_000);
    const answered: string[] = [];
    hold.answer(() => answered.push("a"));
    hold.answer(() => answered.push("b"));
    hold.release();
    expect(answered).toEqual(["a", "b"]);
    hold.answer(() => answered.push("c"));
    expect(answered).toEqual(["a", "b", "c"]);
    // The timers of the released ones do not answer them a second time.
    vi.advanceTimersByTime(20_000);
    expect(answered).toEqual(["a", "b", "c"]);
    expect(hold.mostInFlight).toBe(2);
  });
});
