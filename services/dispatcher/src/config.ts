import {
  DEFAULT_SCHEDULE,
  type FlowSettings,
  parseSchedule,
  RETENTION_MAX_SECONDS,
} from "@herald/db/lifecycle";
import { ConfigReader, type Env } from "@herald/runtime";

export type DispatcherConfig = {
  databaseUrl: string;
  databasePoolSize: number;
  amqpUrl: string;
  amqpPrefix: string;
  retrySchedule: number[];
  attemptTimeoutMs: number;
  endpointDisableAfterMs: number;
  prefetch: number;
  batchSize: number;
  batchWaitMs: number;
  sweepIntervalMs: number;
  /** A scheduled attempt not handed to a sender this long after it was due is sent by the sweeper. */
  sweepGraceMs: number;
  /** A sent attempt with no result this long after it was sent is sent again by the sweeper. */
  attemptDeadlineMs: number;
  /** Each endpoint's limits, pauses and slow-downs (the release gate's). */
  flow: FlowSettings;
  /** How often the release gate looks for endpoints whose waiting attempts may go. */
  releaseIntervalMs: number;
  /** How long an account's events are kept, unless the account has a retention of its own. */
  retentionMs: number;
  /**
   * AUDIT_RETENTION: how long the audit log is kept when that is longer than the account's
   * retention (which it never is shorter than); 0, the default: as long as the account's events.
   */
  auditRetentionMs: number;
  /** How often one dispatcher removes what retention and housekeeping let go. */
  maintenanceIntervalMs: number;
  /** The time each partition of the delivery log covers: retention drops it whole. */
  partitionIntervalMs: number;
  healthPort: number;
  healthHost: string;
};

/**
 * Attempts of one endpoint in flight at most, by default. An attempt counts from its release
 * to its recorded result (100 to 250 ms under load, far more than the request itself), so this
 * also caps how fast one fast receiver is sent to: 100 held one to about 700 deliveries a second
 * in `npm run bench` where the system reached 850. A hanging one holds under half of one
 * sender's SENDER_CONCURRENCY (docs/delivery.md, "Isolation").
 */
export const DEFAULT_MAX_IN_FLIGHT = 200;

export function loadConfig(env: Env = process.env): DispatcherConfig {
  const r = new ConfigReader(env);
  const rawSchedule = r.string("RETRY_SCHEDULE", DEFAULT_SCHEDULE);
  const retrySchedule = parseSchedule(rawSchedule);
  r.check(
    retrySchedule !== null,
    `RETRY_SCHEDULE must be a comma-separated list of durations such as ${DEFAULT_SCHEDULE}, got "${rawSchedule}"`,
  );
  const attemptTimeoutMs = r.attemptTimeout();
  const config: DispatcherConfig = {
    ...r.database(),
    ...r.broker(),
    retrySchedule: retrySchedule ?? [],
    attemptTimeoutMs,
    endpointDisableAfterMs: r.duration("ENDPOINT_DISABLE_AFTER", 5 * 86_400_000),
    // Two batches in hand: the next fills while one is written.
    prefetch: r.int("DISPATCHER_PREFETCH", 200, { min: 1, max: 10_000 }),
    batchSize: r.int("DISPATCHER_BATCH", 100, { min: 1, max: 1000 }),
    // None: a lone message goes at once; under load the next batch fills while two are handled.
    batchWaitMs: r.duration("DISPATCHER_BATCH_WAIT", 0),
    sweepIntervalMs: r.duration("SWEEP_INTERVAL", 15_000),
    sweepGraceMs: r.duration("SWEEP_GRACE", 30_000),
    // 10 min: far past any attempt (15 s timeout) and a long sender backlog; a sent attempt is
    // in RabbitMQ's hands, so this only covers a message the broker itself lost.
    attemptDeadlineMs: r.duration("ATTEMPT_DEADLINE", 600_000),
    flow: {
      maxInFlight: r.int("ENDPOINT_MAX_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT, { min: 1, max: 1000 }),
      breakerAfter: r.int("ENDPOINT_BREAKER_AFTER", 5, { min: 1, max: 1000 }),
      probeAfterMs: r.duration("ENDPOINT_PROBE_AFTER", 30_000),
      probeAfterMaxMs: r.duration("ENDPOINT_PROBE_AFTER_MAX", 600_000),
      pauseMaxMs: r.duration("ENDPOINT_PAUSE_MAX", 3_600_000),
      slowDownMs: r.duration("ENDPOINT_SLOW_DOWN", 60_000),
      fifoFanOutWaitMs: r.duration("FIFO_FAN_OUT_WAIT", 10_000),
    },
    releaseIntervalMs: r.duration("RELEASE_INTERVAL", 100),
    retentionMs: r.duration("RETENTION", 30 * 86_400_000),
    auditRetentionMs: r.duration("AUDIT_RETENTION", 0),
    maintenanceIntervalMs: r.duration("MAINTENANCE_INTERVAL", 60_000),
    partitionIntervalMs: r.duration("PARTITION_INTERVAL", 86_400_000),
    ...r.health(8081),
  };
  // Each attempt request carries this ATTEMPT_TIMEOUT, and senders apply it (or a shorter one
  // of their own): no sender still waits on an attempt the sweeper sends again.
  r.check(
    config.attemptDeadlineMs > attemptTimeoutMs,
    "ATTEMPT_DEADLINE must be longer than ATTEMPT_TIMEOUT",
  );
  r.check(
    config.flow.probeAfterMaxMs >= config.flow.probeAfterMs,
    "ENDPOINT_PROBE_AFTER_MAX must be at least ENDPOINT_PROBE_AFTER",
  );
  r.check(
    config.retentionMs >= 1000 && config.retentionMs <= RETENTION_MAX_SECONDS * 1000,
    "RETENTION must be from 1s to 3660d (ten years)",
  );
  r.check(
    config.auditRetentionMs <= RETENTION_MAX_SECONDS * 1000,
    "AUDIT_RETENTION must be at most 3660d (ten years)",
  );
  r.check(config.maintenanceIntervalMs >= 100, "MAINTENANCE_INTERVAL must be at least 100ms");
  // A partition goes once its newest event is past the retention: an event is kept at most one
  // interval longer than its retention, so the interval must not be longer than the retention.
  r.check(
    config.partitionIntervalMs >= 1000 && config.partitionIntervalMs <= config.retentionMs,
    "PARTITION_INTERVAL must be from 1s to RETENTION",
  );
  r.logLevel();
  r.done();
  return config;
}
