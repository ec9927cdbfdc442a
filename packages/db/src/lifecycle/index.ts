/**
 * The delivery lifecycle's statements, in the order of the flow: fan-out creates deliveries
 * and their first attempts; attempts are handed to the senders; results are recorded, and
 * retries scheduled; due attempts are checked before they are sent again; drops, replays and
 * app deletions change deliveries in bounded batches. Plain SQL on the process's pool, in
 * batches, under one locking rule (locks.ts). The dispatcher is their only caller: it is the
 * only writer of deliveries and attempts.
 */

export { dropDeliveries } from "./drop.ts";
export { checkDue } from "./due.ts";
export { createDeliveries, eventsToFanOut, type FanOutEndpoint, type FanOutEvent } from "./fanOut.ts";
export { type PurgeProgress, purgeApp } from "./purge.ts";
export { completeReplay, type ReplaySpec, replayBatch, startReplay, unsentReplayAttempts } from "./replay.ts";
export { type AttemptResult, type Recorded, type RetryPolicy, recordResults } from "./results.ts";
export { type AttemptToSend, attemptsToSend, claimStranded, markSent, type Which } from "./send.ts";
