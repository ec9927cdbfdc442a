/**
 * The delivery lifecycle's statements, in the order of the flow: fan-out creates deliveries
 * and their first attempts; the release gate hands attempts to the senders as far as each
 * endpoint's limits allow (release.ts, flow.ts); results are recorded, and
 * retries scheduled; due attempts are checked before they are sent again; drops, replays and
 * app deletions change deliveries in bounded batches. Plain SQL on the process's pool, in
 * batches, under one locking rule (locks.ts). Beside them, the pure policies they apply:
 * retryPolicy.ts (the schedule, and what follows a result), flow.ts (the release gate's limits
 * and breaker).
 *
 * The dispatcher is their main caller, and the only one that changes a delivery's status or
 * an attempt. The gateway calls three: `previewReplay` (what a replay would take),
 * `claimReplay` (in the transaction that creates a replay, its claim on the deliveries it will
 * take: their `replay_id`, nothing else) and `stageNotices` (in the transaction of a change made
 * through the API, its operational notices); it also reads RETENTION_MAX_SECONDS and
 * OPERATIONAL_TYPES. The outbox's statements are in ../outbox.
 */

export { type DropScope, dropDeliveries } from "./drop.ts";
export { checkDue } from "./due.ts";
export { type ExpireScope, expireEvents, RETENTION_MAX_SECONDS, removeExpired } from "./expire.ts";
export {
  createDeliveries,
  eventPayloads,
  eventsToFanOut,
  type FanOutEndpoint,
  type FanOutEvent,
  markFannedOut,
  type OutOfOrder,
} from "./fanOutStatements.ts";
export type { Flow, FlowChange, FlowSettings } from "./flow.ts";
export {
  flowNotice,
  type Notice,
  OPERATIONAL_TYPES,
  type OperationalType,
  stageNotices,
} from "./operational.ts";
export {
  createRanges,
  dropRange,
  type Hold,
  type LogPartition,
  logBytes,
  logPartitions,
  planRanges,
  rangeHeld,
  rangeSuffix,
  rangesBefore,
} from "./partitions.ts";
export { type PurgeProgress, purgeApp } from "./purge.ts";
export {
  type Release,
  type ReleaseTarget,
  recountInFlight,
  release,
  unrelease,
  wakeForgotten,
} from "./release.ts";
export {
  claimReplay,
  completeReplay,
  previewReplay,
  type ReplayCandidate,
  type ReplaySpec,
  replayBatch,
  startReplay,
} from "./replay.ts";
export { type AttemptResult, type Recorded, type RecordedBatch, writeResults } from "./resultStatements.ts";
export {
  DEFAULT_SCHEDULE,
  delayTiers,
  type EndpointClock,
  nextDelay,
  nextStep,
  parseSchedule,
  type RetryPolicy,
  type Step,
  type StepInput,
} from "./retryPolicy.ts";
export {
  type AttemptToSend,
  attemptsToSend,
  claimStranded,
  eventData,
  INLINE_DATA_BYTES,
  type Lane,
  laneOf,
} from "./send.ts";
