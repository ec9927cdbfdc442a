import { cpus, totalmem } from "node:os";
import type { Bound } from "./bound.ts";
import type { Ceilings } from "./ceilings.ts";
import type { Comparison } from "./compare.ts";
import type { CpuFigures } from "./cpu.ts";
import type { DbWaits } from "./dbWaits.ts";
import type { DiskUse } from "./diskUse.ts";
import type { HopBreakdown } from "./hops.ts";
import type { MemoryReport } from "./memory.ts";
import type { ProfileName } from "./profiles.ts";
import type {
  ClosedLoopJob,
  IngestJob,
  JobResult,
  NeighbourJob,
  OpenLoopJob,
  SideBySideJob,
} from "./protocol.ts";
import type { ServiceOutput } from "./services.ts";
import type { SoakFigures } from "./soakFigures.ts";
import { type Bin, logHistogram, perSecond, round, summarize } from "./stats.ts";
import type { BacklogSample, BacklogVerdict } from "./sustained.ts";
import type { TargetCheck } from "./targets.ts";

/**
 * The figures of one run, as written to `bench-results/<timestamp>.json` and `latest.json`: the
 * machine's ceilings, then every scenario once per profile (profiles.ts), or with --against once
 * per profile, build and round, in the order they ran, and the comparison. Rates are per
 * second; `ratios` are each figure divided by each ceiling of the same run, unrounded.
 */
export type BenchResults = {
  version: 3;
  startedAt: string;
  finishedAt: string;
  mode: "quick" | "full";
  system: {
    url: string | null;
    dispatchers: number | null;
    senders: number | null;
    env: Record<string, string>;
  };
  machine: { cpus: number; cpuModel: string; memoryMb: number; node: string };
  ceilings: Ceilings;
  /** The most each throughput could reach in this design at these ceilings (bound.ts). */
  bounds: Bound[];
  profiles: ProfileResults[];
  /** With --against: the two builds, and per profile each figure of each round with change ÷ base. */
  against: Against | null;
  /** With --soak: each profile's soak, and no other scenario (`profiles` is empty). */
  soak: SoakFigures[] | null;
};

/** Which build a pass of the scenarios ran, and in which round (--against). */
export type RunOf = { build: "base" | "change"; round: number; commit: string };

export type Against = {
  base: { ref: string; commit: string };
  change: { commit: string; dirty: boolean };
  rounds: number;
  comparisons: Comparison[];
  targets: TargetCheck[];
};

export type ProfileResults = {
  profile: ProfileName;
  /** With --against: the build and round; null otherwise. */
  run: RunOf | null;
  description: string;
  ingest: IngestFigures;
  endToEnd: EndToEndFigures[];
  latency: LatencyFigures[];
  neighbour: NeighbourFigures;
  /**
   * An endpoint with a transformation and a plain one loaded at the same time; null where the
   * build's API refused transformations, absent from results written before the scenario.
   */
  transformedBesidePlain?: TransformedBesidePlainFigures | null;
  /** HTTP endpoints against Redis streams (`--destination redis`); null without it. */
  destination: DestinationFigures | null;
  /** Open loop at 80 % of this run's end-to-end capacity; null when there was none to take 80 % of. */
  sustained: SustainedFigures | null;
  /** Where an event's time goes, from its trace; only where traces are exported. */
  hops: HopBreakdown | null;
  /** What the database's sessions waited on at the first latency rate; not for a system given by --url. */
  dbWaits: DbWaits | null;
  memory: MemoryReport[];
  targets: TargetCheck[];
  serviceOutput: ServiceOutput[];
};

export type Ratios = { http: number; rabbitmq: number; postgres: number };

export type Errors = { errors: number; errorSamples: string[] };

export type IngestFigures = {
  concurrency: number;
  measureSeconds: number;
  eventsPerSecond: number;
  ratios: Ratios;
  /** 201s per second since the job started (warm-up first). */
  acceptedPerSecond: number[];
  warmSeconds: number;
} & Errors;

export type Delivered = {
  /** Events that got their 201 inside the window, per second: what the open loop really achieved. */
  eventsAcceptedPerSecond: number;
  /**
   * Deliveries that arrived inside the window ÷ (events accepted inside it × endpoints): whether
   * what goes out keeps up with what comes in. Those in flight at either end of the window
   * about cancel out.
   */
  deliveredOverAccepted: number | null;
  expected: number;
  arrived: number;
  duplicates: number;
  lost: number;
  drainSeconds: number;
  acceptedPerSecond: number[];
  arrivedPerSecond: number[];
  warmSeconds: number;
} & Errors;

export type EndToEndFigures = {
  name: string;
  endpoints: number;
  eventsInFlight: number;
  measureSeconds: number;
  deliveriesPerSecond: number;
  ratios: Ratios;
  /** What the scenario's events left in the delivery log's tables; null for a system given by `--url`. */
  disk: DiskUse | null;
  /** CPU per delivery of each part of the stack in the window (cpu.ts); null for a system given by `--url`. */
  cpu: CpuFigures | null;
} & Delivered;

/**
 * An end-to-end closed loop with its 201 → arrival latency: one half of the destination scenario,
 * or of transformed beside plain.
 */
export type LoopRun = Omit<EndToEndFigures, "disk"> & { p50Ms: number; p99Ms: number };

/**
 * The destination scenario: the same closed loop to 10 HTTP endpoints, then to 10 Redis streams;
 * `redisOverHttp` divides each figure of the Redis run by the HTTP run's (null where that is 0).
 */
export type DestinationFigures = {
  http: LoopRun;
  redis: LoopRun;
  redisOverHttp: { deliveriesPerSecond: number | null; p50: number | null; p99: number | null };
};

/**
 * Transformed beside plain: the closed loops to an endpoint with a transformation and to a plain
 * one, run at the same time (`cpu` null: the window's CPU is both loops'); `transformedOverPlain`
 * divides the transformed loop's deliveries per second and p50 by the plain one's (null where
 * that is 0).
 */
export type TransformedBesidePlainFigures = {
  transformed: LoopRun;
  plain: LoopRun;
  transformedOverPlain: { deliveriesPerSecond: number | null; p50: number | null };
};

export type LatencyFigures = {
  rate: number;
  /** Events due at `rate` that never went out: every socket was waiting on the gateway. */
  notSent: number;
  measureSeconds: number;
  count: number;
  minMs: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  histogram: Bin[];
} & Delivered;

/** The sustained scenario: its latency and counts as an open loop's, and its backlog each second. */
export type SustainedFigures = LatencyFigures & {
  /** The same run's end-to-end deliveries per second with 1 endpoint, and the share of it offered. */
  capacity: number;
  share: number;
  samples: BacklogSample[];
  backlog: BacklogVerdict;
  cpu: CpuFigures | null;
};

/**
 * The noisy-neighbour scenario: the healthy app's latency (an open loop, as in `latency`) while
 * another app's endpoint hangs, and what that endpoint went through.
 */
export type NeighbourFigures = {
  healthy: LatencyFigures;
  hanging: {
    /** How long it held each request before answering, until the window ended. */
    holdMs: number;
    events: number;
    /** Events a second its events were sent at, from the job's start. */
    rate: number;
    /** Its events that got a 201. */
    accepted: number;
    /** The most of its requests it held at once: Herald's bound on its attempts in flight. */
    mostInFlight: number;
    /** Its deliveries that reached it before the window ended, while it hung. */
    arrivedWhileHanging: number;
    expected: number;
    arrived: number;
    duplicates: number;
    lost: number;
    arrivedPerSecond: number[];
  } & Errors;
};

export function ratios(figure: number, c: Ceilings): Ratios {
  return {
    http: figure / c.httpPostsPerSecond,
    rabbitmq: figure / c.rabbitmqMessagesPerSecond,
    postgres: figure / c.postgresInsertsPerSecond,
  };
}

export function machine(): BenchResults["machine"] {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryMb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
  };
}

/** Deliveries in the window ÷ (events accepted in it × endpoints), to 4 places; null when none were accepted. */
export function deliveredOverAccepted(arrivedInWindow: number, acceptedInWindow: number, endpoints: number) {
  const expected = acceptedInWindow * endpoints;
  return expected > 0 ? Math.round((arrivedInWindow / expected) * 10_000) / 10_000 : null;
}

function delivered(job: { warmMs: number; measureMs: number; paths: string[] }, r: JobResult): Delivered {
  const d = r.deliveries;
  if (!d) throw new Error("a delivery job came back without delivery counts");
  return {
    eventsAcceptedPerSecond: perSecond(r.requests.inWindow, job.measureMs),
    deliveredOverAccepted: deliveredOverAccepted(d.arrivedInWindow, r.requests.inWindow, job.paths.length),
    expected: d.expected,
    arrived: d.arrived,
    duplicates: d.duplicates,
    lost: d.lost,
    drainSeconds: d.drainSeconds,
    acceptedPerSecond: r.requests.perSecond,
    arrivedPerSecond: d.perSecond,
    warmSeconds: job.warmMs / 1000,
    errors: r.requests.errors,
    errorSamples: r.requests.errorSamples,
  };
}

export function ingestFigures(job: IngestJob, r: JobResult, c: Ceilings): IngestFigures {
  const eventsPerSecond = perSecond(r.requests.inWindow, job.measureMs);
  return {
    concurrency: job.concurrency,
    measureSeconds: job.measureMs / 1000,
    eventsPerSecond,
    ratios: ratios(eventsPerSecond, c),
    acceptedPerSecond: r.requests.perSecond,
    warmSeconds: job.warmMs / 1000,
    errors: r.requests.errors,
    errorSamples: r.requests.errorSamples,
  };
}

export function endToEndFigures(
  job: ClosedLoopJob,
  r: JobResult,
  c: Ceilings,
): Omit<EndToEndFigures, "disk" | "cpu"> {
  const deliveriesPerSecond = perSecond(r.deliveries?.arrivedInWindow ?? 0, job.measureMs);
  return {
    name: job.label ?? `${job.paths.length} endpoint${job.paths.length === 1 ? "" : "s"}`,
    endpoints: job.paths.length,
    eventsInFlight: job.inFlight,
    measureSeconds: job.measureMs / 1000,
    deliveriesPerSecond,
    ratios: ratios(deliveriesPerSecond, c),
    ...delivered(job, r),
  };
}

export function loopRun(job: ClosedLoopJob, r: JobResult, c: Ceilings, cpu: CpuFigures | null): LoopRun {
  const s = summarize(r.deliveries?.latenciesMs ?? []);
  return { ...endToEndFigures(job, r, c), cpu, p50Ms: round(s.p50, 2), p99Ms: round(s.p99, 2) };
}

/** a ÷ b to 3 places; null when b is not above 0. */
const over = (a: number, b: number) => (b > 0 ? round(a / b, 3) : null);

export function destinationFigures(http: LoopRun, redis: LoopRun): DestinationFigures {
  return {
    http,
    redis,
    redisOverHttp: {
      deliveriesPerSecond: over(redis.deliveriesPerSecond, http.deliveriesPerSecond),
      p50: over(redis.p50Ms, http.p50Ms),
      p99: over(redis.p99Ms, http.p99Ms),
    },
  };
}

/** The side-by-side job's two loops: its own (the transformed endpoint's) and its `beside` (the plain one's). */
export function transformedBesidePlainFigures(
  job: SideBySideJob,
  r: JobResult,
  c: Ceilings,
): TransformedBesidePlainFigures {
  if (!r.beside) throw new Error("the side-by-side job came back without its second loop's counts");
  const first: ClosedLoopJob = { ...job, kind: "closed-loop" };
  const transformed = loopRun(first, r, c, null);
  const plain = loopRun({ ...first, ...job.beside }, r.beside, c, null);
  return {
    transformed,
    plain,
    transformedOverPlain: {
      deliveriesPerSecond: over(transformed.deliveriesPerSecond, plain.deliveriesPerSecond),
      p50: over(transformed.p50Ms, plain.p50Ms),
    },
  };
}

export function latencyFigures(job: OpenLoopJob | NeighbourJob, r: JobResult): LatencyFigures {
  const latencies = r.deliveries?.latenciesMs ?? [];
  const s = summarize(latencies);
  return {
    rate: job.rate,
    notSent: r.requests.notSent,
    measureSeconds: job.measureMs / 1000,
    count: s.count,
    minMs: round(s.min, 2),
    meanMs: round(s.mean, 2),
    p50Ms: round(s.p50, 2),
    p95Ms: round(s.p95, 2),
    p99Ms: round(s.p99, 2),
    maxMs: round(s.max, 2),
    histogram: logHistogram(latencies, 20, 0.1),
    ...delivered(job, r),
  };
}

export function neighbourFigures(job: NeighbourJob, r: JobResult): NeighbourFigures {
  const noisy = r.noisy;
  if (!noisy) throw new Error("the noisy-neighbour job came back without the hanging endpoint's counts");
  const d = noisy.deliveries;
  return {
    healthy: latencyFigures(job, r),
    hanging: {
      holdMs: job.noisy.holdMs,
      events: job.noisy.events,
      rate: job.noisy.rate,
      accepted: noisy.requests.total,
      mostInFlight: noisy.mostInFlight,
      arrivedWhileHanging: noisy.arrivedWhileHanging,
      expected: d.expected,
      arrived: d.arrived,
      duplicates: d.duplicates,
      lost: d.lost,
      arrivedPerSecond: d.perSecond,
      errors: noisy.requests.errors,
      errorSamples: noisy.requests.errorSamples,
    },
  };
}
