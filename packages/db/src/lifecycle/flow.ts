import { isUnreachable } from "@herald/contracts/errorKinds";

/**
 * The release gate's policy for one endpoint, as pure functions over its `endpoint_flows` row:
 * how many of its waiting attempts may go now (`admit`), and what an attempt's result changes
 * (`afterResult`). release.ts and failedResults.ts read and write the rows; nothing here does I/O.
 *
 * What holds an endpoint's attempts back, in order:
 * - a pause: the circuit breaker (`not_responding`: attempts in a row timed out or failed to
 *   connect; one probe goes after a growing backoff, and any answer closes it) or a
 *   `Retry-After` on a 429 or 503 (`retry_after`, until then, capped);
 * - its in-flight limit (`max_in_flight` up to ENDPOINT_MAX_IN_FLIGHT, or that), halved for a while by
 *   each 429, 502 or 504 without `Retry-After` (a slow-down);
 * - its rate limit: a token bucket of `rate_limit` tokens a second, holding one second's worth;
 * - for a `fifo` endpoint, its order: one attempt at a time, its head (ordering.ts).
 * Held attempts are not attempts: they use no retry step and fail nothing.
 */

export type PauseReason = "not_responding" | "retry_after";
/**
 * `ordering`: a fifo endpoint's attempts wait behind its head; `fan_out`: its head waits for an
 * earlier event's fan-out (ordering.ts).
 */
export type HeldBy = "paused" | "max_in_flight" | "rate_limit" | "ordering" | "fan_out";

/** Holds a result ends: the endpoint's next attempts are released when one comes back. */
export const releasedByResults = (heldBy: string | null): boolean =>
  heldBy === "max_in_flight" || heldBy === "ordering";

export type FlowSettings = {
  /** ENDPOINT_MAX_IN_FLIGHT: attempts of one endpoint in flight at most, unless it sets its own. */
  maxInFlight: number;
  /** Attempts in a row that time out or fail to connect before the breaker opens. */
  breakerAfter: number;
  /** The first pause of an open breaker; it doubles each time a probe fails, up to probeAfterMaxMs. */
  probeAfterMs: number;
  probeAfterMaxMs: number;
  /** A Retry-After pauses the endpoint this long at most. */
  pauseMaxMs: number;
  /** How long a 429, 502 or 504 without Retry-After keeps the in-flight limit lowered. */
  slowDownMs: number;
  /** A fifo endpoint's head waits at most this long after an earlier event's acceptance for its fan-out. */
  fifoFanOutWaitMs: number;
};

export type Flow = {
  endpoint_id: string;
  in_flight: number;
  tokens: number | null;
  tokens_at: Date | null;
  limit_now: number | null;
  slow_until: Date | null;
  paused_until: Date | null;
  pause_reason: PauseReason | null;
  failures: number;
  opens: number;
  probe_attempt_id: string | null;
  held_by: HeldBy | null;
  next_release_at: Date | null;
};

/** A flow with nothing held, paused or slowed, for an endpoint that has none yet. */
export function freshFlow(endpointId: string): Flow {
  return {
    endpoint_id: endpointId,
    in_flight: 0,
    tokens: null,
    tokens_at: null,
    limit_now: null,
    slow_until: null,
    paused_until: null,
    pause_reason: null,
    failures: 0,
    opens: 0,
    probe_attempt_id: null,
    held_by: null,
    next_release_at: null,
  };
}

export type EndpointLimits = { rate_limit: number | null; max_in_flight: number | null };

/** When held by the in-flight limit: results release sooner; this is the latest re-check. */
const IN_FLIGHT_RECHECK_MS = 1000;

const plus = (at: Date, ms: number) => new Date(at.getTime() + ms);

/**
 * The in-flight limit now: the endpoint's own or the default, lowered while slowed down. The
 * endpoint's own only lowers it: ENDPOINT_MAX_IN_FLIGHT is what keeps one endpoint from taking
 * the senders' slots, and a customer sets `max_in_flight` through the portal.
 */
export function inFlightLimit(flow: Flow, limits: EndpointLimits, s: FlowSettings, now: Date): number {
  const full = Math.min(limits.max_in_flight ?? s.maxInFlight, s.maxInFlight);
  const slowed = flow.limit_now !== null && flow.slow_until !== null && flow.slow_until > now;
  return slowed ? Math.min(full, flow.limit_now!) : full;
}

export type Admission = {
  /** How many of the ready attempts go now (the first ones, in order). */
  take: number;
  /** The one attempt taken is the breaker's probe. */
  probe: boolean;
  /** Why some stay, and when to look again; null when none stay. */
  heldBy: HeldBy | null;
  retryAt: Date | null;
};

/**
 * Lets go what the endpoint can take now, of `ready` attempts waiting, with `inFlight` already
 * out; updates `flow` in place (tokens spent, an ended pause or slow-down cleared).
 */
export function admit(
  flow: Flow,
  limits: EndpointLimits,
  inFlight: number,
  ready: number,
  now: Date,
  s: FlowSettings,
): Admission {
  const held = (heldBy: HeldBy, retryAt: Date): Admission =>
    ready > 0
      ? { take: 0, probe: false, heldBy, retryAt }
      : { take: 0, probe: false, heldBy: null, retryAt: null };
  if (flow.slow_until && flow.slow_until <= now) {
    flow.slow_until = null;
    flow.limit_now = null;
  }
  if (flow.paused_until && flow.paused_until > now) return held("paused", flow.paused_until);
  if (flow.pause_reason === "retry_after") {
    flow.pause_reason = null;
    flow.paused_until = null;
  }
  const room = Math.max(0, inFlightLimit(flow, limits, s, now) - inFlight);
  let tokens = Number.POSITIVE_INFINITY;
  if (limits.rate_limit !== null) {
    const rate = limits.rate_limit;
    const elapsed = flow.tokens_at ? Math.max(0, now.getTime() - flow.tokens_at.getTime()) / 1000 : 0;
    tokens = Math.min(rate, (flow.tokens ?? rate) + elapsed * rate);
  }
  const breakerOpen = flow.pause_reason === "not_responding";
  // A probe out is waited for; one no longer in flight (ended without a result) is replaced.
  if (breakerOpen && flow.probe_attempt_id && inFlight > 0) return held("paused", plus(now, s.probeAfterMs));
  if (breakerOpen) flow.probe_attempt_id = null;
  const cap = breakerOpen ? 1 : Number.POSITIVE_INFINITY;
  const take = Math.max(0, Math.min(ready, room, Math.floor(tokens), cap));
  if (limits.rate_limit !== null) {
    flow.tokens = tokens - take;
    // Never back in time: a refill is counted from the latest moment already counted.
    if (!flow.tokens_at || flow.tokens_at < now) flow.tokens_at = now;
  }
  const probe = breakerOpen && take === 1;
  if (take === ready) return { take, probe, heldBy: null, retryAt: null };
  if (breakerOpen) return { take, probe, heldBy: "paused", retryAt: plus(now, s.probeAfterMs) };
  if (limits.rate_limit === null || Math.floor(tokens) >= room)
    return { take, probe, heldBy: "max_in_flight", retryAt: plus(now, IN_FLIGHT_RECHECK_MS) };
  // When the next whole token is there, after what was spent.
  const waitMs = Math.ceil(((1 - (tokens - take)) / limits.rate_limit) * 1000);
  return { take, probe, heldBy: "rate_limit", retryAt: plus(now, Math.max(1, waitMs)) };
}

/** What a result changed in how the endpoint is sent to, for logs and metrics. */
export type FlowChange = {
  endpointId: string;
  change: "paused" | "resumed" | "slowed";
  reason: PauseReason | "slow_down" | null;
  until: Date | null;
  /** A pause after its probe failed too: the endpoint was paused already. */
  again?: true;
};

export type ResultSignal = {
  attemptId: string;
  /** A destination beyond HTTP acknowledges with no status: its success is its answer. */
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
  completedAt: Date;
  /** The endpoint's transformation cancelled it: no request was made, so it says nothing of the endpoint. */
  cancelled?: boolean;
};

/** The probe backoff after the breaker opened `opens` times before: doubling, capped. */
export function probeBackoff(opens: number, s: FlowSettings): number {
  return Math.min(s.probeAfterMaxMs, s.probeAfterMs * 2 ** Math.min(opens, 30));
}

/**
 * Applies one result to the endpoint's flow, in place, in the order results happened. Any
 * answer clears the run of unreachable attempts and closes the breaker: a response, whatever
 * its status, a success without one (a destination beyond HTTP acknowledged the message) or
 * a refusal without one (`rejected`: its server refused the message),
 * as a batch of successes alone does (resultStatements.ts). An unreachable attempt (its error
 * kind `isUnreachable`) extends the run and opens the breaker at `breakerAfter`, or, when it
 * was the probe, pauses it again for a longer backoff.
 * A 429 or 503 with Retry-After pauses the whole endpoint; a 429, 502 or 504 without it halves
 * the in-flight limit for a while.
 */
export function afterResult(
  flow: Flow,
  r: ResultSignal,
  limits: EndpointLimits,
  s: FlowSettings,
): FlowChange | null {
  const wasProbe = flow.probe_attempt_id === r.attemptId;
  if (wasProbe) flow.probe_attempt_id = null;
  const change = (c: FlowChange["change"], reason: FlowChange["reason"], until: Date | null): FlowChange => ({
    endpointId: flow.endpoint_id,
    change: c,
    reason,
    until,
  });
  // No request was made: the run of unreachable attempts neither grows nor ends, and a
  // cancelled probe is replaced by the next attempt released.
  if (r.cancelled) return null;
  // A destination's server that refused the message (`rejected`: a nack, an unroutable
  // message, an error reply) answered, as an HTTP endpoint answering 4xx or 5xx does.
  const answered = r.succeeded || r.responseStatus !== null || r.error === "rejected";
  if (!answered) {
    if (!isUnreachable(r.error)) return null;
    flow.failures += 1;
    const open = flow.pause_reason === "not_responding";
    if ((open && wasProbe) || (!open && flow.failures >= s.breakerAfter)) {
      flow.pause_reason = "not_responding";
      flow.paused_until = plus(r.completedAt, probeBackoff(flow.opens, s));
      flow.opens += 1;
      const paused = change("paused", "not_responding", flow.paused_until);
      return open ? { ...paused, again: true } : paused;
    }
    return null;
  }
  flow.failures = 0;
  let result: FlowChange | null = null;
  if (flow.pause_reason === "not_responding") {
    flow.pause_reason = null;
    flow.paused_until = null;
    flow.opens = 0;
    flow.probe_attempt_id = null;
    if (flow.next_release_at) flow.next_release_at = r.completedAt;
    result = change("resumed", null, null);
  }
  const status = r.responseStatus;
  if ((status === 429 || status === 503) && r.retryAfterMs !== null) {
    const until = plus(r.completedAt, Math.min(Math.max(0, r.retryAfterMs), s.pauseMaxMs));
    if (!flow.paused_until || flow.paused_until < until) {
      flow.paused_until = until;
      flow.pause_reason = "retry_after";
      return change("paused", "retry_after", until);
    }
    return result;
  }
  if (status === 429 || status === 502 || status === 504) {
    const now = r.completedAt;
    flow.limit_now = Math.max(1, Math.floor(inFlightLimit(flow, limits, s, now) / 2));
    flow.slow_until = plus(now, s.slowDownMs);
    return change("slowed", "slow_down", flow.slow_until);
  }
  return result;
}
