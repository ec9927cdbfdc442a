/**
 * What the benchmark's main process and its load generator (a forked process: `load.ts`) say to
 * each other over IPC. Main sends jobs; the generator answers with progress each second and one
 * result per job.
 *
 * Terms: a job runs a warm-up, then a measurement window, then (for jobs that count deliveries)
 * a drain, waiting for every delivery of every accepted event to reach the receivers.
 */

/** Closed loop: `concurrency` workers, each sending its next event as soon as its last got a 201. */
export type IngestJob = { kind: "ingest"; app: string; concurrency: number } & Timing;

/**
 * Closed loop through the whole system: `inFlight` workers, each sending an event, then waiting
 * until all `paths` received it (or `slotTimeoutMs` passed) before sending the next.
 */
export type ClosedLoopJob = {
  kind: "closed-loop";
  app: string;
  paths: string[];
  /**
   * The server whose Redis streams `paths` name, when the app's endpoints are those streams
   * (redisStreams.ts): its deliveries are counted as they are read from them, not at the receivers.
   */
  redis?: string;
  /** How the report names it; by default from its endpoints ("10 endpoints"). */
  label?: string;
  inFlight: number;
  slotTimeoutMs: number;
} & Timing &
  Drain;

/**
 * Two closed loops at the same time, each as a ClosedLoopJob's: the first to `app`, the second to
 * `beside.app`, each with its own workers and counts, sharing the gateway's sockets and the
 * system, so that whatever slows one while the other runs shows in their ratio.
 */
export type SideBySideJob = Omit<ClosedLoopJob, "kind" | "redis"> & {
  kind: "side-by-side";
  beside: { app: string; paths: string[]; label: string; inFlight: number };
};

/** Open loop: events sent at a fixed `rate` per second whatever the answers, for latency. */
export type OpenLoopJob = { kind: "open-loop"; app: string; paths: string[]; rate: number } & Timing & Drain;

/** The raw HTTP ceiling: 1 KB JSON POSTs to `url` from `concurrency` workers. */
export type PostJob = { kind: "post"; url: string; concurrency: number; bodyBytes: number } & Timing;

/**
 * Noisy neighbour: an open loop at `rate` to a healthy app, while `noisy.events` events go to
 * another app at `noisy.rate` from the job's start, whose endpoint answers each request only after
 * `noisy.holdMs`. When the window ends the hanging endpoint answers what it holds and then
 * everything at once, so its backlog drains with the job's.
 */
export type NeighbourJob = {
  kind: "neighbour";
  app: string;
  paths: string[];
  rate: number;
  noisy: { app: string; paths: string[]; events: number; rate: number; holdMs: number };
} & Timing &
  Drain;

/**
 * Soak: an open loop as above, for minutes on end. Its tracker forgets each event once all its
 * deliveries arrived, and each progress report carries what happened since the last one
 * (`SoakSamples`), from which main makes its per-minute figures (soak.ts).
 */
export type SoakJob = Omit<OpenLoopJob, "kind"> & { kind: "soak" };

export type Job = IngestJob | ClosedLoopJob | SideBySideJob | OpenLoopJob | PostJob | NeighbourJob | SoakJob;

export type Timing = { warmMs: number; measureMs: number };
export type Drain = { drainMs: number };

export type Phase = "warm-up" | "measure" | "drain";

/** The requests a job made. `inWindow` counts 2xx answers received inside the measurement window. */
export type RequestCounts = {
  measureSeconds: number;
  inWindow: number;
  total: number;
  errors: number;
  /** The first few errors, as `status body` or the socket error. */
  errorSamples: string[];
  /** Open loop: events due that never went out, as every socket was still waiting for an answer. */
  notSent: number;
  /** 2xx answers per second since the job started (warm-up, window and drain). */
  perSecond: number[];
};

/** The deliveries of the events a job sent, as the receivers saw them (deduped by webhook-id + path). */
export type DeliveryCounts = {
  arrivedInWindow: number;
  expected: number;
  arrived: number;
  duplicates: number;
  /** A soak's arrivals whose event got no 201 in time (soakTracker.ts). */
  unmatched?: number;
  lost: number;
  drainSeconds: number;
  /** Distinct arrivals per second since the job started. */
  perSecond: number[];
  /** From each `201` received inside the window to each of its arrivals, in ms. */
  latenciesMs: number[];
};

/** The hanging endpoint of a neighbour job, as its receiver saw it. */
export type NoisyCounts = {
  /** Its events' POSTs (errors among them). */
  requests: RequestCounts;
  deliveries: DeliveryCounts;
  /** The most requests it held at once: Herald's bound on one endpoint's attempts in flight. */
  mostInFlight: number;
  /** Its deliveries that arrived before the window ended, while it hung. */
  arrivedWhileHanging: number;
};

export type JobResult = {
  requests: RequestCounts;
  deliveries: DeliveryCounts | null;
  noisy?: NoisyCounts;
  /** A side-by-side job's second loop. */
  beside?: { requests: RequestCounts; deliveries: DeliveryCounts };
};

export type Gateway = { baseUrl: string; apiKey: string };

export type ToLoad = { type: "init"; gateway: Gateway } | { type: "run"; id: number; job: Job };

/** What a delivery job has counted so far: events accepted (201s) and distinct deliveries arrived. */
export type Totals = { accepted: number; arrived: number };

/**
 * A soak's events since its last progress report, each stamped in ms since the job started:
 * when each event got its `201`, and when each delivery of an accepted event arrived, with its
 * latency from that `201` (`arrived[i]` goes with `latenciesMs[i]`). A delivery that arrived
 * before its own `201` was read is stamped when the `201` was, with latency 0.
 */
export type SoakSamples = { accepted: number[]; arrived: number[]; latenciesMs: number[] };

export type FromLoad =
  | { type: "ready"; receiverPort: number }
  | {
      type: "progress";
      id: number;
      phase: Phase;
      secondsLeft: number;
      /** ms since the job started. */
      atMs: number;
      /** For jobs that count deliveries. */
      totals?: Totals;
      /** For a soak. */
      samples?: SoakSamples;
    }
  /** Sent as the measurement window starts and as it ends, so main can read the processes' CPU then. */
  | { type: "window"; id: number; edge: "start" | "end" }
  | { type: "done"; id: number; result: JobResult }
  | { type: "failed"; id: number; message: string };
