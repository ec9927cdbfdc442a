import { countsAgainstEndpoint } from "@herald/contracts/errorKinds";
import { type DeliveryStatus, isOpen } from "@herald/contracts/statuses";
import { parseDuration } from "@herald/runtime/config";
import type { FlowSettings } from "./flow.ts";

/**
 * The retry policy, as pure functions: the schedule of waits between attempts, and the
 * decision of what follows one attempt's result (`nextStep`). No database here: the results'
 * transaction (failedResults.ts) reads the delivery and its endpoint, asks `nextStep`, and writes what
 * it decided. The dispatcher parses the schedule from its config (RETRY_SCHEDULE) and declares
 * one delay queue per tier (`delayTiers`).
 *
 * The schedule lists the delay before each retry, after the first attempt: the default 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 10 h makes 8 attempts over about 28 hours. 5 s first: a blip
 * (a deploy, a restart) is retried before anyone notices.
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

/** The dispatcher's retry policy, as the lifecycle needs it. */
export type RetryPolicy = {
  /** The wait before the attempt after `attemptNumber` failed, or null when the schedule ran out. */
  nextDelay(attemptNumber: number, retryAfterMs: number | null): number | null;
  /** An endpoint whose attempts have all failed this long is disabled. */
  disableAfterMs: number;
  /** How endpoints are paused and slowed down (flow.ts). */
  flow: FlowSettings;
};

/** What of an attempt's result the decision reads. */
export type ResultOutcome = {
  succeeded: boolean;
  responseStatus: number | null;
  /** The error kind (@herald/contracts' ERROR_KINDS), null on a success. */
  error: string | null;
  retryAfterMs: number | null;
  completedAt: Date;
  /** The endpoint's transformation cancelled the delivery: no request was made. */
  cancelled?: boolean;
};

/** What of an endpoint the decision reads and may change: its failure clock and whether it is sent to. */
export type EndpointClock = {
  failing_since: Date | null;
  disabled: boolean;
  deleted: boolean;
};

export type StepInput = {
  result: ResultOutcome;
  /** The attempt's number, 1 for the first. */
  attemptNumber: number;
  /** The delivery's status as locked, before this result. */
  deliveryStatus: DeliveryStatus;
  /** The endpoint as locked, with what the batch's earlier results did to it; undefined when not found. */
  endpoint: EndpointClock | undefined;
  policy: Pick<RetryPolicy, "nextDelay" | "disableAfterMs">;
};

export type Step = {
  /** The delivery's status after this result. */
  status: DeliveryStatus;
  /** The wait before the next attempt, when one is scheduled (`retrying`); null otherwise. */
  retryDelayMs: number | null;
  /** Set when this result disabled the endpoint: why, as the endpoint's `disabled_reason`. */
  disabledReason: string | null;
  /** The schedule ran out: `failed`, with the endpoint neither disabled nor deleted. */
  exhausted: boolean;
  /** The endpoint's clock after this result (a new object; undefined when it was not found). */
  endpoint: EndpointClock | undefined;
};

function days(ms: number): string {
  const d = ms / 86_400_000;
  return d >= 1 ? `${+d.toFixed(1)} days` : `${Math.round(ms / 1000)} s`;
}

/**
 * What follows one attempt's result, given its delivery and its endpoint. A success ends the
 * delivery and stops the endpoint's failure clock. A failure starts the clock; once it has run
 * for `disableAfterMs` the endpoint is disabled and the delivery fails; a 410 Gone disables it
 * at once; otherwise the schedule decides: a retry, or `failed` when it ran out. A delivery
 * dropped or ended while the attempt was in flight keeps its status; one whose endpoint is
 * deleted, or not found (its app being deleted), is dropped. One the endpoint's transformation
 * cancelled is `cancelled`, the endpoint's clock as it was.
 *
 * The batch's results of one endpoint are decided in the order they happened, each given the
 * endpoint as the one before left it (`Step.endpoint`), so they see each other.
 */
export function nextStep({ result, attemptNumber, deliveryStatus, endpoint, policy }: StepInput): Step {
  const ended = { retryDelayMs: null, disabledReason: null, exhausted: false };
  if (result.succeeded)
    return { status: "succeeded", ...ended, endpoint: endpoint && { ...endpoint, failing_since: null } };
  if (!isOpen(deliveryStatus)) return { status: deliveryStatus, ...ended, endpoint };
  // The endpoint's own code chose not to send it: final, and neither a success nor a failure.
  // No request was made, so the endpoint's failure clock neither starts nor stops.
  if (result.cancelled) return { status: "cancelled", ...ended, endpoint };
  // Not found: the endpoint's app is being deleted; nothing more is sent to it.
  if (!endpoint) return { status: "dropped", ...ended, endpoint };
  const clock = { ...endpoint };
  // The operator's egress proxy failing is not the endpoint's doing: it neither starts the
  // endpoint's failure clock nor disables it.
  const counts = countsAgainstEndpoint(result.error);
  if (counts) clock.failing_since ??= result.completedAt;
  const failingFor = clock.failing_since ? result.completedAt.getTime() - clock.failing_since.getTime() : 0;
  let disabledReason: string | null = null;
  // Standard Webhooks: a 410 Gone says the receiver wants nothing more.
  if (result.responseStatus === 410 && !clock.disabled && !clock.deleted) {
    clock.disabled = true;
    disabledReason = `Disabled automatically: the endpoint answered 410 Gone at ${result.completedAt.toISOString()}.`;
  } else if (counts && failingFor >= policy.disableAfterMs && !clock.disabled && !clock.deleted) {
    clock.disabled = true;
    disabledReason = `Disabled automatically: every attempt failed for ${days(failingFor)}, since ${clock.failing_since!.toISOString()}.`;
  }
  const delayMs =
    clock.deleted || clock.disabled ? null : policy.nextDelay(attemptNumber, result.retryAfterMs);
  if (delayMs === null) {
    if (clock.deleted) return { status: "dropped", ...ended, disabledReason, endpoint: clock };
    return { status: "failed", ...ended, disabledReason, exhausted: !clock.disabled, endpoint: clock };
  }
  return { status: "retrying", retryDelayMs: delayMs, disabledReason, exhausted: false, endpoint: clock };
}
