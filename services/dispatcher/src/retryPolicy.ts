import { parseDuration } from "@herald/runtime";

/**
 * Retry policy, as pure functions. The schedule lists the delay before each retry, after the
 * first attempt: the default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h makes 8 attempts over
 * about 28 hours. 5 s first: a blip (a deploy, a restart) is retried before anyone notices.
 */
export const DEFAULT_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";

export function parseSchedule(raw: string): number[] | null {
  const steps = raw.split(",").map((s) => parseDuration(s.trim()));
  if (steps.length === 0 || steps.some((s) => s === null || s <= 0)) return null;
  return steps as number[];
}

/** The delays that get a delay queue: each distinct step. */
export function delayTiers(schedule: readonly number[]): number[] {
  return [...new Set(schedule)].sort((a, b) => a - b);
}

/**
 * How long to wait after attempt `attemptNumber` (1-based) failed, or null when the schedule
 * has run out. A Retry-After (on a 429 or 503) is honoured up to the next step: the wait is
 * the shortest delay tier that is at least Retry-After, and never longer than the step.
 */
export function nextDelay(
  schedule: readonly number[],
  attemptNumber: number,
  retryAfterMs: number | null,
): number | null {
  const step = schedule[attemptNumber - 1];
  if (step === undefined) return null;
  if (retryAfterMs === null || retryAfterMs >= step) return step;
  return delayTiers(schedule).find((tier) => tier >= retryAfterMs && tier <= step) ?? step;
}
