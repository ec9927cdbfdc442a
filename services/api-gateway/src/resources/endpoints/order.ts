import type { Deps } from "../../context.ts";
import type { Schema } from "../../http/route.ts";
import { iso } from "../common.ts";

/** What a fifo endpoint's queue waits on: its head, the delivery of the earliest event still open. */
export type HeldBehind = {
  event: string;
  delivery: string;
  /** Attempts made of it so far. */
  attempts: number;
  in_flight: boolean;
  next_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  /** It waits for the fan-out of an event accepted before it, which goes first. */
  awaiting_fan_out: boolean;
  /** Open deliveries behind it, counted up to WAITING_MAX. */
  waiting: number;
  waiting_capped: boolean;
};

/** Deliveries waiting behind the head are counted this far at most. */
const WAITING_MAX = 10_000;

type HeadRow = {
  event_id: string;
  delivery_id: string;
  attempts: number;
  sent_at: Date | null;
  scheduled_at: Date;
  last_response_status: number | null;
  last_error: string | null;
  waiting: number;
};

/**
 * A fifo endpoint's head, read as the release gate reads it (the open attempts' index by event,
 * migration 0020), with its delivery's last attempt, and how many wait behind it; null when
 * nothing is open. One statement: the head and the count agree.
 */
export async function heldBehind(
  deps: Deps,
  endpointId: string,
  awaitingFanOut: boolean,
): Promise<HeldBehind | null> {
  const { rows } = await deps.pool.query<HeadRow>(
    `WITH head AS (
       SELECT a.delivery_id, a.event_id, a.sent_at, a.scheduled_at, a.attempt_number FROM attempts a
       WHERE a.endpoint_id = $1 AND a.status = 'pending' ORDER BY a.event_id, a.attempt_number LIMIT 1)
     SELECT h.event_id, h.delivery_id, h.sent_at, h.scheduled_at, d.attempts,
            last.response_status AS last_response_status, last.error AS last_error,
            (SELECT count(*)::int - 1 FROM (SELECT 1 FROM attempts q WHERE q.endpoint_id = $1 AND q.status = 'pending'
                                            LIMIT $2) x) AS waiting
     FROM head h JOIN deliveries d ON d.id = h.delivery_id AND d.event_id = h.event_id
     LEFT JOIN LATERAL (
       SELECT a.response_status, a.error FROM attempts a
       WHERE a.delivery_id = h.delivery_id AND a.event_id = h.event_id AND a.status <> 'pending'
       ORDER BY a.attempt_number DESC LIMIT 1) last ON true`,
    [endpointId, WAITING_MAX + 1],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    event: r.event_id,
    delivery: r.delivery_id,
    attempts: r.attempts,
    in_flight: r.sent_at !== null,
    next_attempt_at: r.sent_at ? null : iso(r.scheduled_at),
    awaiting_fan_out: awaitingFanOut,
    last_response_status: r.last_response_status,
    last_error: r.last_error,
    waiting: Math.min(r.waiting, WAITING_MAX),
    waiting_capped: r.waiting > WAITING_MAX,
  };
}

/** The head in words, for `delivery_state.description`. */
export function describeHeld(h: HeldBehind): string {
  const n = `${h.waiting}${h.waiting_capped ? "+" : ""} deliver${h.waiting === 1 ? "y waits" : "ies wait"}`;
  const last =
    h.attempts === 0
      ? "it has not been attempted yet"
      : `its attempt ${h.attempts} failed (${h.last_response_status !== null ? `HTTP ${h.last_response_status}` : (h.last_error ?? "no answer")})`;
  if (h.awaiting_fan_out)
    return `In order (fifo): event ${h.event} and ${n} behind it wait for an event accepted before it, still being fanned out, which goes first.`;
  const next = h.in_flight
    ? "an attempt is in flight now"
    : h.next_attempt_at
      ? `the next attempt is at ${h.next_attempt_at}`
      : "the next attempt is due";
  return `In order (fifo): ${n} behind event ${h.event}; ${last}, and ${next}. They go once it succeeds or fails for good.`;
}

export const heldBehindSchema: Schema = {
  type: ["object", "null"],
  description:
    "Of a `fifo` endpoint held by its order (`reason: ordering`), and only in the response of `GET /v3/endpoints/{id}`: the delivery the others wait behind, the earliest event's still open. Elsewhere `null`.",
  required: [
    "event",
    "delivery",
    "attempts",
    "in_flight",
    "next_attempt_at",
    "last_response_status",
    "last_error",
    "awaiting_fan_out",
    "waiting",
    "waiting_capped",
  ],
  properties: {
    event: { type: "string" },
    delivery: { type: "string" },
    attempts: { type: "integer", description: "Attempts made of it so far." },
    in_flight: { type: "boolean", description: "An attempt of it is being made now." },
    next_attempt_at: { type: ["string", "null"], format: "date-time" },
    last_response_status: { type: ["integer", "null"], description: "Its last attempt's HTTP status." },
    last_error: { type: ["string", "null"], description: "Its last attempt's error kind." },
    awaiting_fan_out: {
      type: "boolean",
      description:
        "It waits itself, for an event accepted before it whose deliveries are still being made (by another dispatcher, or after a failed publish), for at most `FIFO_FAN_OUT_WAIT` after that event's acceptance: that event goes first.",
    },
    waiting: { type: "integer", description: "Open deliveries behind it (up to 10,000)." },
    waiting_capped: { type: "boolean", description: "There are more than 10,000." },
  },
};
