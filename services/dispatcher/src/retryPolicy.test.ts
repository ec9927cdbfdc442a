import { describe, expect, it } from "vitest";
import { DEFAULT_SCHEDULE, delayTiers, nextDelay, parseSchedule } from "./retryPolicy.ts";

const schedule = parseSchedule(DEFAULT_SCHEDULE)!;

describe("the retry schedule", () => {
  it("defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts in all", () => {
    expect(schedule).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(delayTiers(schedule)).toHaveLength(6);
  });

  it("parses custom schedules and refuses bad ones", () => {
    expect(parseSchedule("1s,1s,1s")).toEqual([1000, 1000, 1000]);
    expect(parseSchedule("1s, 2m")).toEqual([1000, 120_000]);
    expect(parseSchedule("1s,,2s")).toBeNull();
    expect(parseSchedule("0s")).toBeNull();
    expect(parseSchedule("soon")).toBeNull();
  });

  it.each([
    [1, null, 5_000],
    [2, null, 300_000],
    [7, null, 36_000_000],
    [8, null, null],
    // Retry-After shorter than the step: the shortest tier that honours it.
    [3, 60_000, 300_000],
    [3, 1_000, 5_000],
    // Longer than the step: capped at the step.
    [1, 3_600_000, 5_000],
  ])("after attempt %i (Retry-After %s) waits %s", (attempt, retryAfter, expected) => {
    expect(nextDelay(schedule, attempt, retryAfter)).toBe(expected);
  });
});
