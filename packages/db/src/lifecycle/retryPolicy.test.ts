import type { DeliveryStatus } from "@herald/contracts/statuses";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_SCHEDULE,
  delayTiers,
  type EndpointClock,
  nextDelay,
  nextStep,
  parseSchedule,
  type ResultOutcome,
  type Step,
} from "./retryPolicy.ts";

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

describe("what follows a result (nextStep)", () => {
  const DAY = 86_400_000;
  const at = new Date("2025-01-10T12:00:00.000Z");
  const ago = (ms: number) => new Date(at.getTime() - ms);
  const policy = {
    nextDelay: (n: number, retryAfter: number | null) => nextDelay(schedule, n, retryAfter),
    disableAfterMs: 3 * DAY,
  };
  const healthy: EndpointClock = { failing_since: null, disabled: false, deleted: false };
  const failingFor = (ms: number): EndpointClock => ({ ...healthy, failing_since: ago(ms) });
  const result = (r: Partial<ResultOutcome>): ResultOutcome => ({
    succeeded: false,
    responseStatus: 500,
    error: "http_error",
    retryAfterMs: null,
    completedAt: at,
    ...r,
  });
  const ok = result({ succeeded: true, responseStatus: 200, error: null });
  const retry = (ms: number): Partial<Step> => ({
    status: "retrying",
    retryDelayMs: ms,
    disabledReason: null,
    exhausted: false,
  });
  const ended = (status: DeliveryStatus, exhausted = false): Partial<Step> => ({
    status,
    retryDelayMs: null,
    disabledReason: null,
    exhausted,
  });

  type Row = {
    name: string;
    result: ResultOutcome;
    attempt?: number;
    delivery?: DeliveryStatus;
    endpoint: EndpointClock | undefined;
    step: Partial<Step>;
    /** The endpoint's clock after it, when the row checks it. */
    after?: EndpointClock | undefined;
  };
  const rows: Row[] = [
    // Successes.
    {
      name: "a success ends the delivery",
      result: ok,
      endpoint: healthy,
      step: ended("succeeded"),
      after: healthy,
    },
    {
      name: "a success stops a running failure clock",
      result: ok,
      endpoint: failingFor(DAY),
      step: ended("succeeded"),
      after: healthy,
    },
    {
      name: "a success of a delivery dropped in flight is still a success",
      result: ok,
      delivery: "dropped",
      endpoint: healthy,
      step: ended("succeeded"),
    },
    { name: "a success with the endpoint gone", result: ok, endpoint: undefined, step: ended("succeeded") },
    // Deliveries no longer open keep their status.
    ...(["succeeded", "failed", "dropped"] as const).map(
      (status): Row => ({
        name: `a failure of a delivery already ${status} leaves it so, clock untouched`,
        result: result({}),
        delivery: status,
        endpoint: healthy,
        step: ended(status),
        after: healthy,
      }),
    ),
    // Endpoint gone.
    {
      name: "a failure whose endpoint is not found drops it",
      result: result({}),
      endpoint: undefined,
      step: ended("dropped"),
    },
    {
      name: "a failure whose endpoint was deleted drops it, never disables it",
      result: result({ responseStatus: 410 }),
      endpoint: { ...failingFor(4 * DAY), deleted: true },
      step: ended("dropped"),
      after: { ...failingFor(4 * DAY), deleted: true },
    },
    // The schedule.
    {
      name: "a first failure retries after the first step and starts the clock",
      result: result({}),
      attempt: 1,
      endpoint: healthy,
      step: retry(5_000),
      after: { ...healthy, failing_since: at },
    },
    {
      name: "a running clock keeps its start",
      result: result({ error: "timeout", responseStatus: null }),
      attempt: 3,
      endpoint: failingFor(DAY),
      step: retry(1_800_000),
      after: failingFor(DAY),
    },
    {
      name: "a pending delivery (a replay) is retried too",
      result: result({}),
      attempt: 2,
      delivery: "pending",
      endpoint: healthy,
      step: retry(300_000),
    },
    {
      name: "Retry-After shortens the wait to the tier that honours it",
      result: result({ responseStatus: 429, retryAfterMs: 60_000 }),
      attempt: 3,
      endpoint: healthy,
      step: retry(300_000),
    },
    {
      name: "the last attempt of the schedule exhausts the delivery",
      result: result({}),
      attempt: 8,
      endpoint: failingFor(DAY),
      step: ended("failed", true),
      after: failingFor(DAY),
    },
    // Disabling.
    {
      name: "a 410 Gone disables the endpoint at once and fails the delivery",
      result: result({ responseStatus: 410 }),
      attempt: 1,
      endpoint: healthy,
      step: {
        ...ended("failed"),
        disabledReason: "Disabled automatically: the endpoint answered 410 Gone at 2025-01-10T12:00:00.000Z.",
      },
      after: { failing_since: at, disabled: true, deleted: false },
    },
    {
      name: "failing for ENDPOINT_DISABLE_AFTER disables it and fails the delivery",
      result: result({}),
      attempt: 2,
      endpoint: failingFor(3 * DAY),
      step: {
        ...ended("failed"),
        disabledReason:
          "Disabled automatically: every attempt failed for 3 days, since 2025-01-07T12:00:00.000Z.",
      },
      after: { ...failingFor(3 * DAY), disabled: true },
    },
    {
      name: "failing for a moment less is retried",
      result: result({}),
      attempt: 2,
      endpoint: failingFor(3 * DAY - 1),
      step: retry(300_000),
    },
    {
      name: "an endpoint already disabled fails the delivery, neither exhausted nor disabled again",
      result: result({ responseStatus: 410 }),
      attempt: 1,
      endpoint: { ...failingFor(DAY), disabled: true },
      step: ended("failed"),
      after: { ...failingFor(DAY), disabled: true },
    },
    // Cancelled by the endpoint's transformation: no request, no failure.
    {
      name: "a cancelled attempt ends the delivery cancelled, the clock neither started nor retried",
      result: result({ responseStatus: null, error: null, cancelled: true }),
      attempt: 1,
      endpoint: healthy,
      step: ended("cancelled"),
      after: healthy,
    },
    {
      name: "a cancelled attempt leaves a running clock running: it answered nothing",
      result: result({ responseStatus: null, error: null, cancelled: true }),
      attempt: 3,
      endpoint: failingFor(4 * DAY),
      step: ended("cancelled"),
      after: failingFor(4 * DAY),
    },
    {
      name: "a cancelled attempt of a delivery dropped in flight leaves it dropped",
      result: result({ responseStatus: null, error: null, cancelled: true }),
      delivery: "dropped",
      endpoint: healthy,
      step: ended("dropped"),
    },
    // The egress proxy's failures are not the endpoint's.
    {
      name: "a proxy_error does not start the clock",
      result: result({ responseStatus: null, error: "proxy_error" }),
      attempt: 1,
      endpoint: healthy,
      step: retry(5_000),
      after: healthy,
    },
    {
      name: "a proxy_error does not disable an endpoint failing for long",
      result: result({ responseStatus: null, error: "proxy_error" }),
      attempt: 2,
      endpoint: failingFor(4 * DAY),
      step: retry(300_000),
      after: failingFor(4 * DAY),
    },
    // Nor are the sender's transformation workers all being busy: the code never ran.
    {
      name: "a transformation_busy does not start the clock",
      result: result({ responseStatus: null, error: "transformation_busy" }),
      attempt: 1,
      endpoint: healthy,
      step: retry(5_000),
      after: healthy,
    },
  ];

  it.each(rows)("$name", (row) => {
    const { endpoint } = row;
    const before = structuredClone(endpoint);
    const decided = nextStep({
      result: row.result,
      attemptNumber: row.attempt ?? 1,
      deliveryStatus: row.delivery ?? "retrying",
      endpoint,
      policy,
    });
    expect(decided).toMatchObject(row.step);
    if ("after" in row) expect(decided.endpoint).toEqual(row.after);
    // Pure: the endpoint it was given is left as it was.
    expect(endpoint).toEqual(before);
  });

  it("says a shorter time in seconds", () => {
    const step = nextStep({
      result: result({}),
      attemptNumber: 1,
      deliveryStatus: "retrying",
      endpoint: failingFor(90_000),
      policy: { ...policy, disableAfterMs: 60_000 },
    });
    expect(step.disabledReason).toBe(
      "Disabled automatically: every attempt failed for 90 s, since 2025-01-10T11:58:30.000Z.",
    );
  });
});
