/**
 * One job of the load generator (load.ts) as it runs: its clock, its window, the POSTs it has out
 * to the gateway and what they got back, and the progress reports main follows it by.
 */
import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { type Answer, keepAliveAgent, postJson } from "./http.ts";
import type { FromLoad, Job, Phase, RequestCounts } from "./protocol.ts";
import { countInSecond } from "./stats.ts";
import type { Tracking } from "./tracker.ts";

/** Sockets to the gateway: the most POSTs in flight at once. */
export const SOCKETS = 64;
const agent = keepAliveAgent(SOCKETS);

/** A message to main, over IPC. */
export function send(message: FromLoad): void {
  process.send?.(message);
}

/** What one job's requests got back. */
export class Requests {
  readonly counts: RequestCounts;
  constructor(
    private readonly window: { start: number; end: number },
    measureMs: number,
  ) {
    this.counts = {
      measureSeconds: measureMs / 1000,
      inWindow: 0,
      total: 0,
      errors: 0,
      errorSamples: [],
      notSent: 0,
      perSecond: [],
    };
  }
  ok(at: number): void {
    this.counts.total++;
    countInSecond(this.counts.perSecond, at);
    if (at >= this.window.start && at < this.window.end) this.counts.inWindow++;
  }
  fail(what: string): void {
    this.counts.errors++;
    if (this.counts.errorSamples.length < 5) this.counts.errorSamples.push(what.slice(0, 300));
  }
}

/** One job's clock (ms since it started), window, POSTs in flight and progress reports. */
export function startRun(id: number, job: Job) {
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  const window = { start: job.warmMs, end: job.warmMs + job.measureMs };
  const abort = new AbortController();
  // Every POST out listens on it; an open loop can have thousands queued.
  setMaxListeners(0, abort.signal);
  let drainUntil: number | null = null;
  let posting = 0;
  const requests = new Requests(window, job.measureMs);
  let tracker: Tracking | null = null;
  const report = () => {
    const t = clock();
    const [phase, until]: [Phase, number] =
      t < window.start
        ? ["warm-up", window.start]
        : drainUntil === null
          ? ["measure", window.end]
          : ["drain", drainUntil];
    send({
      type: "progress",
      id,
      phase,
      secondsLeft: Math.max(0, Math.ceil((until - t) / 1000)),
      atMs: Math.round(t),
      ...(tracker ? { totals: { accepted: requests.counts.total, arrived: tracker.arrivals() } } : {}),
      ...(tracker?.take ? { samples: tracker.take() } : {}),
    });
  };
  report();
  const timer = setInterval(report, 1000);
  // Main reads the processes' CPU at these two moments (cpu.ts).
  const edges = [
    setTimeout(() => send({ type: "window", id, edge: "start" }), window.start),
    setTimeout(() => send({ type: "window", id, edge: "end" }), window.end),
  ];
  return {
    clock,
    window,
    requests,
    posting: () => posting,
    /** The job's tracker, whose totals then go with each progress report. */
    track(t: Tracking): void {
      tracker = t;
    },
    /** A POST that the end of the job aborts if it is still out. */
    async post(url: URL, body: string, headers: Record<string, string> = {}): Promise<Answer> {
      posting++;
      try {
        return await postJson(agent, url, body, headers, abort.signal);
      } finally {
        posting--;
      }
    },
    /**
     * After the window: waits until no POST is out and `done()`, for at most `limitMs`, then
     * aborts what is left and waits for `sending` to stop. Returns the seconds it waited.
     */
    async finish(sending: Promise<void>, limitMs: number, done: () => boolean): Promise<number> {
      await sleep(Math.max(0, window.end - clock()));
      const from = clock();
      drainUntil = from + limitMs;
      report();
      while (!(posting === 0 && done()) && clock() - from < limitMs) await sleep(20);
      const waited = Math.round(clock() - from) / 1000;
      abort.abort();
      await sending;
      return waited;
    },
    stop: () => {
      clearInterval(timer);
      for (const e of edges) clearTimeout(e);
    },
  };
}

export type Run = ReturnType<typeof startRun>;
