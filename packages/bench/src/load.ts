/**
 * The load generator, forked by main so its work does not share an event loop with the
 * orchestration: the local receivers (receivers.ts), the senders that POST events to the gateway
 * (closed and open loop, and a noisy neighbour beside an open loop), and the bookkeeping of what
 * was accepted, what arrived and when. Main sends jobs over IPC (see protocol.ts); each job
 * answers with its counts.
 */
import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { eventBody } from "./apps.ts";
import { type Answer, keepAliveAgent, paddedJson, postJson } from "./http.ts";
import type {
  ClosedLoopJob,
  FromLoad,
  Gateway,
  IngestJob,
  Job,
  JobResult,
  NeighbourJob,
  OpenLoopJob,
  Phase,
  PostJob,
  RequestCounts,
  SoakJob,
  ToLoad,
} from "./protocol.ts";
import { Hold, receive, receivers } from "./receivers.ts";
import { readStreams } from "./redisStreams.ts";
import { SoakTracker } from "./soakTracker.ts";
import { countInSecond } from "./stats.ts";
import { DeliveryTracker, type Tracking } from "./tracker.ts";

/** Sockets to the gateway: the most POSTs in flight at once. */
const SOCKETS = 64;
const agent = keepAliveAgent(SOCKETS);
let gateway: Gateway | null = null;

function send(message: FromLoad): void {
  process.send?.(message);
}

/** What one job's requests got back. */
class Requests {
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
function start(id: number, job: Job) {
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

type Run = ReturnType<typeof start>;

/** How long a job without deliveries waits for its last answers after the window. */
const FINISH_MS = 10_000;

function eventsUrl(): { url: URL; headers: Record<string, string> } {
  if (!gateway) throw new Error("the load generator was not told where the gateway is");
  return {
    url: new URL("/v3/events", gateway.baseUrl),
    headers: { authorization: `Bearer ${gateway.apiKey}` },
  };
}

let seq = 0;
/** POSTs one event; its id once it got a 201, else null (counted as an error in `requests`). */
async function sendEvent(
  run: Run,
  app: string,
  tracker: Tracking | null,
  requests = run.requests,
): Promise<string | null> {
  const { url, headers } = eventsUrl();
  try {
    const answer = await run.post(url, eventBody(app, seq++), headers);
    const at = run.clock();
    if (answer.status !== 201) {
      requests.fail(`${answer.status} ${answer.body}`);
      return null;
    }
    const id = (JSON.parse(answer.body) as { id: string }).id;
    requests.ok(at);
    tracker?.accept(id, at);
    return id;
  } catch (err) {
    requests.fail(String(err));
    return null;
  }
}

/** `n` workers each calling `step` until the window ends; a failed step backs off 10 ms. */
async function loop(run: Run, n: number, step: () => Promise<boolean>): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (run.clock() < run.window.end) if (!(await step())) await sleep(10);
    }),
  );
}

async function ingest(run: Run, job: IngestJob): Promise<JobResult> {
  const sending = loop(run, job.concurrency, async () => (await sendEvent(run, job.app, null)) !== null);
  await run.finish(sending, FINISH_MS, () => true);
  return { requests: run.requests.counts, deliveries: null };
}

async function post(run: Run, job: PostJob): Promise<JobResult> {
  const url = new URL(job.url);
  const body = paddedJson(job.bodyBytes);
  const sending = loop(run, job.concurrency, async () => {
    try {
      const answer = await run.post(url, body);
      if (answer.status < 300) run.requests.ok(run.clock());
      else run.requests.fail(`${answer.status} ${answer.body}`);
      return answer.status < 300;
    } catch (err) {
      run.requests.fail(String(err));
      return false;
    }
  });
  await run.finish(sending, FINISH_MS, () => true);
  return { requests: run.requests.counts, deliveries: null };
}

/**
 * Counts the deliveries of `app`'s events with `tracker` while `sending` runs (at the receivers,
 * or read from the job's Redis streams), then drains: waits until every accepted event reached
 * every endpoint (and `alsoDrained()`), for at most `drainMs`.
 */
async function withDeliveries<T extends Tracking>(
  run: Run,
  job: ClosedLoopJob | OpenLoopJob | NeighbourJob | SoakJob,
  tracker: T,
  sending: (tracker: T) => Promise<void>,
  alsoDrained: () => boolean = () => true,
): Promise<JobResult> {
  run.track(tracker);
  const stop =
    job.kind === "closed-loop" && job.redis
      ? await readStreams(job.redis, job.paths, (id, stream) => tracker.arrive(id, stream, run.clock()))
      : receive({ pathPrefix: `/${job.app}/`, tracker, clock: run.clock });
  try {
    const drainSeconds = await run.finish(
      sending(tracker),
      job.drainMs,
      () => tracker.drained() && alsoDrained(),
    );
    return { requests: run.requests.counts, deliveries: tracker.counts(drainSeconds) };
  } finally {
    await stop();
  }
}

function closedLoop(run: Run, job: ClosedLoopJob): Promise<JobResult> {
  return withDeliveries(run, job, new DeliveryTracker(job.paths.length, run.window), (tracker) =>
    loop(run, job.inFlight, async () => {
      const id = await sendEvent(run, job.app, tracker);
      if (id === null) return false;
      // A delivery that never comes frees its slot after a while (or when the window ends); the
      // drain then counts it lost.
      const wait = Math.min(job.slotTimeoutMs, run.window.end - run.clock());
      await Promise.race([tracker.delivered(id), sleep(Math.max(0, wait))]);
      return true;
    }),
  );
}

/**
 * Calls `send` `rate` times a second until the window ends (or `count` calls were due), whatever
 * the answers. With all 64 sockets busy, a due call waits its turn (as it would in the agent's
 * queue); those still waiting when the window ends are dropped. Resolves then, with their number:
 * events the system did not take at the rate.
 */
function paced(run: Run, rate: number, send: () => Promise<unknown>, count = Number.POSITIVE_INFINITY) {
  let waiting = 0;
  const fire = (): void => {
    void send().finally(() => {
      if (waiting > 0 && run.clock() < run.window.end) {
        waiting--;
        fire();
      }
    });
  };
  return new Promise<number>((resolve) => {
    const interval = 1000 / rate;
    let next = 0;
    let due = 0;
    const timer = setInterval(() => {
      for (const now = run.clock(); next <= now && next < run.window.end && due < count; next += interval) {
        due++;
        if (run.posting() < SOCKETS) fire();
        else waiting++;
      }
      if (run.clock() >= run.window.end) {
        clearInterval(timer);
        const notSent = waiting;
        waiting = 0;
        resolve(notSent);
      }
    }, 1);
  });
}

/**
 * Sends at `rate` whatever the answers; due events never sent are `notSent`. POSTs out then are
 * the drain's. A soak's tracker forgets what is done and hands each second's events to main.
 */
function openLoop(run: Run, job: OpenLoopJob | SoakJob): Promise<JobResult> {
  const tracker =
    job.kind === "soak"
      ? new SoakTracker(job.paths.length, run.window)
      : new DeliveryTracker(job.paths.length, run.window);
  return withDeliveries(run, job, tracker, async (tracker) => {
    run.requests.counts.notSent = await paced(run, job.rate, () => sendEvent(run, job.app, tracker));
  });
}

/**
 * An open loop to the healthy app beside the noisy app's events, whose endpoint hangs until the
 * window ends (see NeighbourJob). Its figures: the healthy app's, and the hanging endpoint's
 * deliveries and the most attempts it had in flight.
 */
async function neighbour(run: Run, job: NeighbourJob): Promise<JobResult> {
  const hold = new Hold(job.noisy.holdMs);
  const noisy = new DeliveryTracker(job.noisy.paths.length, run.window);
  const noisyRequests = new Requests(run.window, job.measureMs);
  const stop = receive({ pathPrefix: `/${job.noisy.app}/`, tracker: noisy, clock: run.clock, hold });
  let arrivedWhileHanging = 0;
  const hanging = setTimeout(
    () => {
      arrivedWhileHanging = noisy.counts(0).arrived;
      hold.release();
    },
    Math.max(0, run.window.end - run.clock()),
  );
  try {
    const healthy = await withDeliveries(
      run,
      job,
      new DeliveryTracker(job.paths.length, run.window),
      async (tracker) => {
        const [notSent] = await Promise.all([
          paced(run, job.rate, () => sendEvent(run, job.app, tracker)),
          paced(
            run,
            job.noisy.rate,
            () => sendEvent(run, job.noisy.app, noisy, noisyRequests),
            job.noisy.events,
          ),
        ]);
        run.requests.counts.notSent = notSent;
      },
      () => noisy.drained(),
    );
    return {
      ...healthy,
      noisy: {
        requests: noisyRequests.counts,
        deliveries: noisy.counts(healthy.deliveries?.drainSeconds ?? 0),
        mostInFlight: hold.mostInFlight,
        arrivedWhileHanging,
      },
    };
  } finally {
    clearTimeout(hanging);
    stop();
  }
}

async function runJob(id: number, job: Job): Promise<JobResult> {
  const run = start(id, job);
  try {
    switch (job.kind) {
      case "ingest":
        return await ingest(run, job);
      case "post":
        return await post(run, job);
      case "closed-loop":
        return await closedLoop(run, job);
      case "open-loop":
      case "soak":
        return await openLoop(run, job);
      case "neighbour":
        return await neighbour(run, job);
    }
  } finally {
    run.stop();
  }
}

process.on("message", (raw) => {
  const message = raw as ToLoad;
  if (message.type === "init") gateway = message.gateway;
  else
    runJob(message.id, message.job).then(
      (result) => send({ type: "done", id: message.id, result }),
      (err: unknown) => send({ type: "failed", id: message.id, message: String(err) }),
    );
});
// Main went away: nothing left to do.
process.on("disconnect", () => process.exit(0));

receivers.listen(0, "127.0.0.1", () => {
  const address = receivers.address();
  send({ type: "ready", receiverPort: typeof address === "object" && address ? address.port : 0 });
});
