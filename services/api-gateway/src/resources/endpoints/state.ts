import type { Schema } from "../../http/route.ts";
import { iso } from "../common.ts";
import { describeHeld, type HeldBehind, heldBehindSchema } from "./order.ts";

/**
 * What a customer sees of how their endpoint is being sent to: the release gate's state of
 * it (the dispatcher's `endpoint_flows` row), in words. Deliveries held back are never
 * failed and use no retry step: they wait, and go when the endpoint can take them.
 */
export type FlowRow = {
  limitNow: number | null;
  slowUntil: Date | null;
  pausedUntil: Date | null;
  pauseReason: string | null;
  failures: number;
  probeAttemptId: string | null;
  heldBy: string | null;
  nextReleaseAt: Date | null;
};

type EndpointLike = {
  disabled: boolean;
  disabledReason: string | null;
  rateLimit: number | null;
  maxInFlight: number | null;
  flow?: FlowRow | null;
};

export type DeliveryState = {
  state: "active" | "throttled" | "paused" | "disabled";
  reason:
    | "disabled"
    | "not_responding"
    | "retry_after"
    | "slow_down"
    | "rate_limit"
    | "max_in_flight"
    | "ordering"
    | null;
  until: string | null;
  description: string;
  held_behind: HeldBehind | null;
};

const at = (d: Date) => d.toISOString();

/**
 * `held`: a fifo endpoint's head (order.ts), when the caller read it; shown while the
 * endpoint is held by its order.
 */
export function deliveryState(
  e: EndpointLike,
  now = new Date(),
  held: HeldBehind | null = null,
): DeliveryState {
  const state = stateOf(e, now, held);
  return { ...state, held_behind: state.reason === "ordering" ? held : null };
}

function stateOf(e: EndpointLike, now: Date, held: HeldBehind | null): Omit<DeliveryState, "held_behind"> {
  const f = e.flow;
  if (e.disabled)
    return {
      state: "disabled",
      reason: "disabled",
      until: null,
      description: e.disabledReason ?? "Disabled: nothing is sent to it until it is enabled.",
    };
  if (f?.pauseReason === "not_responding") {
    const next = f.probeAttemptId
      ? "one test delivery is on its way now"
      : f.pausedUntil
        ? `next try at ${at(f.pausedUntil)}`
        : "next try soon";
    return {
      state: "paused",
      reason: "not_responding",
      until: f.probeAttemptId ? null : iso(f.pausedUntil),
      description: `Not responding: attempts in a row timed out or could not connect. Deliveries are held, not failed; ${next}. Any answer resumes them.`,
    };
  }
  if (f?.pausedUntil && f.pausedUntil > now)
    return {
      state: "paused",
      reason: "retry_after",
      until: at(f.pausedUntil),
      description: `Asked to wait (Retry-After): deliveries are held until ${at(f.pausedUntil)}, then resume.`,
    };
  if (f?.slowUntil && f.slowUntil > now && f.limitNow !== null)
    return {
      state: "throttled",
      reason: "slow_down",
      until: at(f.slowUntil),
      description: `Answered 429, 502 or 504: at most ${f.limitNow} attempt${f.limitNow === 1 ? "" : "s"} in flight until ${at(f.slowUntil)}.`,
    };
  if (f?.heldBy === "rate_limit" && f.nextReleaseAt)
    return {
      state: "throttled",
      reason: "rate_limit",
      until: null,
      description: `Deliveries are waiting for its rate limit of ${e.rateLimit} a second.`,
    };
  if (f?.heldBy === "ordering" || f?.heldBy === "fan_out")
    return {
      state: "throttled",
      reason: "ordering",
      until: null,
      description: held
        ? describeHeld(held)
        : "In order (fifo): deliveries wait behind the earliest open one, which goes first.",
    };
  if (f?.heldBy === "max_in_flight" && f.nextReleaseAt)
    return {
      state: "throttled",
      reason: "max_in_flight",
      until: null,
      description: `At its limit of attempts in flight${e.maxInFlight ? ` (${e.maxInFlight})` : ""}: the next deliveries go as these finish.`,
    };
  return { state: "active", reason: null, until: null, description: "Deliveries go out as they come." };
}

export const deliveryStateSchema: Schema = {
  type: "object",
  required: ["state", "reason", "until", "description", "held_behind"],
  description:
    "How deliveries to the endpoint go now. Held deliveries are not failed and use no retry step: they wait, and go when the endpoint can take them.",
  properties: {
    state: {
      enum: ["active", "throttled", "paused", "disabled"],
      description:
        "`active`: deliveries go out as they come. `throttled`: some wait for its rate limit, its in-flight limit, its order (`fifo`), or a slow-down after a 429, 502 or 504. `paused`: none go until `until` (it stopped answering, or asked to wait with Retry-After). `disabled`: nothing is sent.",
    },
    reason: {
      type: ["string", "null"],
      enum: [
        "disabled",
        "not_responding",
        "retry_after",
        "slow_down",
        "rate_limit",
        "max_in_flight",
        "ordering",
        null,
      ],
      description:
        "`ordering`: a `fifo` endpoint's deliveries wait behind its earliest open one (`held_behind`) until it succeeds or fails for good.",
    },
    until: {
      type: ["string", "null"],
      format: "date-time",
      description:
        "When a pause or slow-down ends (for `not_responding`: when one test delivery, the probe, goes).",
    },
    description: { type: "string", description: "The state in words, for people." },
    held_behind: heldBehindSchema,
  },
};

export const limitFields: Record<string, Schema> = {
  ordering: {
    enum: ["none", "fifo"],
    description:
      "`none` (the default): deliveries go as its limits allow, several at once, and a retry may come after newer events. `fifo`: one at a time, in the order the events were accepted (their ids' order); a failing delivery holds those behind it while it is retried, until it succeeds or fails for good, then the next goes. `delivery_state` says what holds them. Replays to a `fifo` endpoint go in their events' order too.",
  },
  rate_limit: {
    type: ["integer", "null"],
    minimum: 1,
    maximum: 10_000,
    description:
      "Deliveries a second at most, bursts of one second's worth; `null` (the default): no limit. Waiting for it never fails a delivery nor uses a retry step.",
  },
  max_in_flight: {
    type: ["integer", "null"],
    minimum: 1,
    maximum: 1000,
    description:
      "Attempts in flight to it at once, at most, below the installation's `ENDPOINT_MAX_IN_FLIGHT` (a higher value does not raise that); `null` (the default): the installation's limit.",
  },
};
