import type { BenchApp, BenchApps } from "./apps.ts";
import type {
  ClosedLoopJob,
  IngestJob,
  NeighbourJob,
  OpenLoopJob,
  SideBySideJob,
  Timing,
} from "./protocol.ts";

export type Durations = {
  /** Load on the freshly started system before any scenario: a cold one is slow for seconds (JIT, pools). */
  systemWarmMs: number;
  warmMs: number;
  /** Ingest and latency windows. */
  measureMs: number;
  /** End-to-end windows: longer, as a backlog takes a while to show. */
  endToEndMs: number;
  /** Longest wait for the last deliveries after a window; 5 s covers a first retry (the default schedule's step). */
  drainMs: number;
  /** The sustained scenario's window: long enough for a backlog that grows to show it. */
  sustainedMs: number;
  ceiling: Timing;
};

export const QUICK: Durations = {
  systemWarmMs: 3000,
  warmMs: 1000,
  measureMs: 3000,
  endToEndMs: 3000,
  drainMs: 10_000,
  sustainedMs: 10_000,
  ceiling: { warmMs: 500, measureMs: 1500 },
};

export const FULL: Durations = {
  systemWarmMs: 10_000,
  warmMs: 3000,
  measureMs: 10_000,
  endToEndMs: 15_000,
  drainMs: 60_000,
  sustainedMs: 60_000,
  ceiling: { warmMs: 1000, measureMs: 5000 },
};

/** POSTs in flight when measuring ingest. */
export const INGEST_CONCURRENCY = 64;
/**
 * Deliveries in flight in the end-to-end closed loops (320 events with 1 endpoint, 32 with 10):
 * far more than one sender's 64 attempts and a dispatcher's prefetch of 50, so the system, not
 * the loop, sets the pace; few enough that the backlog drains in a second.
 */
export const END_TO_END_DELIVERIES_IN_FLIGHT = 320;
/** The open-loop rates latency is measured at, events per second (1 endpoint). */
export const LATENCY_RATES = [200, 1000];

export function ingestJob(apps: BenchApps, d: Durations): IngestJob {
  return {
    kind: "ingest",
    app: apps.ingest.uid,
    concurrency: INGEST_CONCURRENCY,
    warmMs: d.warmMs,
    measureMs: d.measureMs,
  };
}

/** End-to-end with 1 endpoint, its figures thrown away: it warms the system up. */
export function systemWarmUpJob(apps: BenchApps, d: Durations): ClosedLoopJob {
  const [oneEndpoint] = endToEndJobs(apps, d);
  return { ...oneEndpoint!, warmMs: 0, measureMs: d.systemWarmMs };
}

export function endToEndJobs(apps: BenchApps, d: Durations): ClosedLoopJob[] {
  return [
    closedLoop(apps.one, d),
    closedLoop(apps.ten, d),
    ...(apps.tenFiltered ? [closedLoop(apps.tenFiltered, d, "10 endpoints, each filtered")] : []),
    ...(apps.tenTransformed ? [closedLoop(apps.tenTransformed, d, "10 endpoints, each transformed")] : []),
  ];
}

function closedLoop(
  app: BenchApp,
  d: Durations,
  label?: string,
  deliveriesInFlight = END_TO_END_DELIVERIES_IN_FLIGHT,
): ClosedLoopJob {
  return {
    kind: "closed-loop",
    app: app.uid,
    paths: app.paths,
    ...(label ? { label } : {}),
    inFlight: Math.ceil(deliveriesInFlight / app.paths.length),
    // 30 s: past a first retry (5 s) of a failed attempt; a slot stuck longer is a delivery lost.
    slotTimeoutMs: 30_000,
    warmMs: d.warmMs,
    measureMs: d.endToEndMs,
    drainMs: d.drainMs,
  };
}

/**
 * Transformed beside plain (issue 35's target): the end-to-end closed loop to an endpoint with
 * BENCH_TRANSFORMATION and the same to a plain one, at the same time on the same system, each
 * with half the deliveries in flight, so that neither has the system to itself and their ratio
 * is what the transformation costs next to an endpoint without one. Null when the build's API
 * refused transformations.
 */
export function transformedBesidePlainJob(apps: BenchApps, d: Durations): SideBySideJob | null {
  const pair = apps.transformedBesidePlain;
  if (!pair) return null;
  const half = END_TO_END_DELIVERIES_IN_FLIGHT / 2;
  const transformed = closedLoop(pair.transformed, d, "1 endpoint, transformed", half);
  const plain = closedLoop(pair.plain, d, "1 endpoint, plain", half);
  return {
    ...transformed,
    kind: "side-by-side",
    beside: { app: plain.app, paths: plain.paths, label: plain.label!, inFlight: plain.inFlight },
  };
}

/**
 * The destination scenario (`--destination redis`): the end-to-end closed loop to 10 HTTP
 * endpoints, then the same to 10 Redis streams, one after the other on the same system, so the
 * two differ only in where the deliveries go.
 */
export function destinationJobs(
  apps: NonNullable<BenchApps["destination"]>,
  d: Durations,
): { http: ClosedLoopJob; redis: ClosedLoopJob } {
  return {
    http: closedLoop(apps.http, d, "10 HTTP endpoints"),
    redis: { ...closedLoop(apps.redis, d, "10 Redis Streams endpoints"), redis: apps.redisUrl },
  };
}

export function latencyJobs(apps: BenchApps, d: Durations): OpenLoopJob[] {
  return LATENCY_RATES.map((rate) => ({
    kind: "open-loop",
    app: apps.one.uid,
    paths: apps.one.paths,
    rate,
    warmMs: d.warmMs,
    measureMs: d.measureMs,
    drainMs: d.drainMs,
  }));
}

/**
 * The noisy neighbour: another app's endpoint holds every request 10 s (within ATTEMPT_TIMEOUT,
 * so each is an answer, not a timeout), and 1,000 events go to it in 2 s, while the healthy app gets events at the
 * first latency rate (so its figures sit next to that scenario's, measured alone).
 */
export const NOISY = { events: 1000, rate: 500, holdMs: 10_000 };

export function neighbourJob(apps: BenchApps, d: Durations): NeighbourJob {
  return {
    kind: "neighbour",
    app: apps.one.uid,
    paths: apps.one.paths,
    rate: LATENCY_RATES[0]!,
    noisy: { app: apps.noisy.uid, paths: apps.noisy.paths, ...NOISY },
    warmMs: d.warmMs,
    measureMs: d.measureMs,
    drainMs: d.drainMs,
  };
}

/** The sustained scenario's offered load, as a share of the run's own end-to-end capacity (1 endpoint). */
export const SUSTAINED_SHARE = 0.8;

/**
 * Sustained load: an open loop to the 1-endpoint app at SUSTAINED_SHARE of `capacity`, the
 * deliveries per second the same run's closed loop with 1 endpoint reached, for a long window:
 * whether the system keeps up with a load it can carry, its backlog staying bounded.
 */
export function sustainedJob(apps: BenchApps, d: Durations, capacity: number): OpenLoopJob {
  return {
    kind: "open-loop",
    app: apps.one.uid,
    paths: apps.one.paths,
    rate: Math.max(1, Math.round(capacity * SUSTAINED_SHARE)),
    warmMs: d.warmMs,
    measureMs: d.sustainedMs,
    drainMs: d.drainMs,
  };
}
