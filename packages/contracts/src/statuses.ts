/**
 * The states of a delivery, an attempt and a replay: the one list every service, the pages
 * and the database's CHECK constraints (packages/db, migration 0006) agree on. No I/O and no
 * import here, so the pages bundle it as is (`@herald/contracts/statuses`).
 *
 * A delivery (one event on its way to one endpoint):
 * - `pending`: its first attempt, or a replayed one, is scheduled or in flight;
 * - `succeeded`: an attempt got a 2xx. Final;
 * - `retrying`: the last attempt failed; the next is due at `next_attempt_at`;
 * - `failed`: the schedule ran out, or the endpoint was disabled. A replay can retry it;
 * - `dropped`: the endpoint was deleted, or the event's payload erased, while the delivery was
 *   pending or retrying;
 * - `cancelled`: the endpoint's transformation cancelled it (`cancel: true`). Final, and
 *   neither a success nor a failure.
 */
export const DELIVERY_STATUSES = [
  "pending",
  "succeeded",
  "retrying",
  "failed",
  "dropped",
  "cancelled",
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Whether a delivery still expects an attempt: the ones a drop, a disable or a due retry acts on. */
export const isOpen = (status: DeliveryStatus): boolean => status === "pending" || status === "retrying";

/**
 * An attempt: `pending` until its sender reports, then `succeeded` or `failed` (with an error
 * kind), or `cancelled` when the endpoint's transformation cancelled it (no request was made).
 */
export const ATTEMPT_STATUSES = ["pending", "succeeded", "failed", "cancelled"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** A replay: `queued`, `running` while the dispatcher hands its deliveries over, then `completed`. */
export const REPLAY_STATUSES = ["queued", "running", "completed"] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];
