import type { ReactNode } from "react";
import { Link } from "../router.tsx";
import type { DeliveryState, HeldBehind } from "../types.ts";
import { Status } from "./Status.tsx";
import { Time } from "./Time.tsx";

/**
 * How deliveries to an endpoint go when they do not simply go out as they come: a badge
 * (throttled and paused look different), the reason in a few words with when it ends (in the
 * viewer's time zone), and what that means for their deliveries. Nothing for an active endpoint,
 * nor for a disabled one: its "disabled" badge is already beside it. The portal's endpoints and
 * the dashboard's health list share it. The API's `description` says the same for API users, with
 * times in UTC; it is shown only for a reason these pages do not know yet.
 */
export function DeliveryStateLine({
  value,
  eventHref,
}: {
  value: DeliveryState;
  /** Where an event's page is, to link the one a fifo endpoint's deliveries wait behind. */
  eventHref?: (id: string) => string;
}) {
  if (value.state === "active" || value.state === "disabled") return null;
  const { head, detail } = value.held_behind ? heldWords(value.held_behind, eventHref) : words(value);
  return (
    <div className={`delivery-state delivery-state-${value.state}`}>
      <p className="delivery-state-head">
        <Status value={value.state} /> <span>— {head}</span>
      </p>
      <p className="delivery-state-description">{detail}</p>
    </div>
  );
}

const HELD = "Deliveries are held, not failed, and use no retry step.";
const WAIT = "Deliveries wait their turn: none fail and none use a retry step.";

/** Why deliveries wait and until when, if the API knows; then what it means for them. */
function words({ reason, until, description }: DeliveryState): { head: ReactNode; detail: ReactNode } {
  const when = until ? <Time value={until} /> : null;
  switch (reason) {
    case "not_responding":
      return {
        // No `until` while the one test delivery that tells whether it answers again is out.
        head: when ? (
          <>not responding; next try at {when}</>
        ) : (
          "not responding; a test delivery is on its way"
        ),
        detail: `Attempts in a row timed out or could not connect. ${HELD} Any answer resumes them.`,
      };
    case "retry_after":
      return {
        head: when ? <>asked to wait (Retry-After); resumes at {when}</> : "asked to wait (Retry-After)",
        detail: HELD,
      };
    case "slow_down":
      return {
        head: when ? (
          <>slowed down after a 429, 502 or 504; until {when}</>
        ) : (
          "slowed down after a 429, 502 or 504"
        ),
        detail: `Fewer attempts go at once for a while. ${WAIT}`,
      };
    case "rate_limit":
      return { head: "waiting for its rate limit", detail: WAIT };
    case "max_in_flight":
      return { head: "at its limit of attempts in flight", detail: WAIT };
    case "ordering":
      return {
        head: "in order: deliveries wait behind the earliest one",
        detail: "They go one at a time, once the one before succeeds or fails for good.",
      };
    default:
      return { head: "deliveries are held", detail: description };
  }
}

/** A fifo endpoint's queue: how many wait behind which event, and what that one is waiting for. */
function heldWords(
  h: HeldBehind,
  eventHref?: (id: string) => string,
): { head: ReactNode; detail: ReactNode } {
  const waiting = `${h.waiting.toLocaleString()}${h.waiting_capped ? "+" : ""}`;
  const event = eventHref ? (
    <Link href={eventHref(h.event)} className="mono">
      {h.event}
    </Link>
  ) : (
    <span className="mono">{h.event}</span>
  );
  if (h.awaiting_fan_out)
    return {
      head: <>in order: event {event} waits for an earlier one</>,
      detail: `An event accepted before it is still being fanned out, and goes first. ${waiting} more wait behind it; none fail.`,
    };
  const last =
    h.attempts === 0
      ? "It has not been attempted yet"
      : `Its attempt ${h.attempts} failed (${h.last_response_status !== null ? `HTTP ${h.last_response_status}` : (h.last_error ?? "no answer")})`;
  const next = h.in_flight ? (
    "an attempt is in flight now"
  ) : h.next_attempt_at ? (
    <>
      the next is at <Time value={h.next_attempt_at} />
    </>
  ) : (
    "the next is due"
  );
  return {
    head: (
      <>
        in order: {waiting} waiting behind event {event}
      </>
    ),
    detail: (
      <>
        {last}; {next}. The others go once it succeeds or fails for good: they are held, not failed.
      </>
    ),
  };
}
