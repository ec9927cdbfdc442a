import type { Admission } from "./flow.ts";

/**
 * A `fifo` endpoint's queue, as the release gate reads it (release.ts): its head is its open
 * attempt of the earliest event accepted, and only the head may go, one at a time. The head is
 * held while it is in flight, while it waits for its next retry, and while an event accepted
 * before it (and after the endpoint's last released one) has not been fanned out yet, for at
 * most `fifoFanOutWaitMs` after that event's acceptance: two dispatchers may fan out two events
 * in either order, and the earlier one's delivery must be made before the later one goes.
 */
export type FifoHead = {
  head_id: string | null;
  head_event_id: string | null;
  head_sent_at: Date | null;
  head_due_at: Date | null;
  /** The attempt released last, not the head, is still in flight. */
  other_in_flight: boolean | null;
  /** An earlier event's fan-out is awaited. */
  head_behind_fan_out: boolean | null;
  /** Open attempts of the endpoint, the head among them, counted up to 2. */
  fifo_queued: number | null;
};

/** How often a fifo endpoint with a head in flight is looked at again; results release sooner. */
const IN_FLIGHT_RECHECK_MS = 1000;
/** How often a head waiting for an earlier event's fan-out is looked at again. */
const FAN_OUT_RECHECK_MS = 200;

const plus = (at: Date, ms: number) => new Date(at.getTime() + ms);

/**
 * Why a fifo endpoint's attempts wait after the gate admitted `taken` (0 or 1) of its head,
 * and when to look again: the gate's own reason when its limits held the head (a pause, the
 * rate limit); `fan_out` while an earlier event's fan-out is awaited; else `ordering` when
 * anything waits behind the head.
 * A head alone waiting for its retry is no hold: its due message releases it.
 */
export function orderingHold(
  h: FifoHead,
  taken: number,
  a: Admission,
  now: Date,
): Pick<Admission, "heldBy" | "retryAt"> {
  if (a.heldBy) return { heldBy: a.heldBy, retryAt: a.retryAt };
  const none = { heldBy: null, retryAt: null };
  if (!h.head_id) return none;
  const behind = (h.fifo_queued ?? 0) > 1;
  const ordering = (retryAt: Date) => ({ heldBy: "ordering" as const, retryAt });
  if (h.other_in_flight) return ordering(plus(now, IN_FLIGHT_RECHECK_MS));
  if (taken || h.head_sent_at) return behind ? ordering(plus(now, IN_FLIGHT_RECHECK_MS)) : none;
  if (h.head_behind_fan_out) return { heldBy: "fan_out", retryAt: plus(now, FAN_OUT_RECHECK_MS) };
  if (h.head_due_at && h.head_due_at > now) return behind ? ordering(h.head_due_at) : none;
  return none;
}

/** The later of two event ids (ULIDs: later is greater), for `fifo_after`. */
export const laterEvent = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : a > b ? a : b;
