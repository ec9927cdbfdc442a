import type { ReactNode } from "react";
import type { DeliveryState } from "../types.ts";
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
export function DeliveryStateLine({ value }: { value: DeliveryState }) {
  if (value.state === "active" || value.state === "disabled") return null;
  const { head, detail } = words(value);
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
function words({ reason, until, description }: DeliveryState): { head: ReactNode; detail: string } {
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
    default:
      return { head: "deliveries are held", detail: description };
  }
}
