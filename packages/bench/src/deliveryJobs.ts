/**
 * The load generator's jobs that follow each event to its endpoints: the closed and open loops,
 * two closed loops side by side, a soak, and the noisy neighbour beside an open loop.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Requests, type Run } from "./jobRun.ts";
import type {
  ClosedLoopJob,
  JobResult,
  NeighbourJob,
  OpenLoopJob,
  SideBySideJob,
  SoakJob,
} from "./protocol.ts";
import { Hold, receive } from "./receivers.ts";
import { readStreams } from "./redisStreams.ts";
import { loop, paced, sendEvent } from "./senders.ts";
import { SoakTracker } from "./soakTracker.ts";
import { DeliveryTracker, type Tracking } from "./tracker.ts";

/**
 * Counts the deliveries of `app`'s events with `tracker` while `sending` runs (at the receivers,
 * or read from the job's Redis streams), then drains: waits until every accepted event reached
 * every endpoint (and `alsoDrained()`), for at most `drainMs`.
 */
async function withDeliveries<T extends Tracking>(
  run: Run,
  job: ClosedLoopJob | SideBySideJob | OpenLoopJob | NeighbourJob | SoakJob,
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

/**
 * A closed loop's sending: `inFlight` workers, each sending an event to `app` and waiting until
 * every endpoint received it (or `slotTimeoutMs` passed) before sending the next.
 */
function closedSending(
  run: Run,
  app: string,
  inFlight: number,
  slotTimeoutMs: number,
  tracker: DeliveryTracker,
  requests = run.requests,
): Promise<void> {
  return loop(run, inFlight, async () => {
    const id = await sendEvent(run, app, tracker, requests);
    if (id === null) return false;
    // A delivery that never comes frees its slot after a while (or when the window ends); the
    // drain then counts it lost.
    const wait = Math.min(slotTimeoutMs, run.window.end - run.clock());
    await Promise.race([tracker.delivered(id), sleep(Math.max(0, wait))]);
    return true;
  });
}

export function closedLoop(run: Run, job: ClosedLoopJob): Promise<JobResult> {
  return withDeliveries(run, job, new DeliveryTracker(job.paths.length, run.window), (tracker) =>
    closedSending(run, job.app, job.inFlight, job.slotTimeoutMs, tracker),
  );
}

/**
 * Two closed loops at once (see SideBySideJob), each with its own tracker and requests; the drain
 * waits for both. The first loop's figures are the result's own, the second's its `beside`.
 */
export async function sideBySide(run: Run, job: SideBySideJob): Promise<JobResult> {
  const other = job.beside;
  const beside = new DeliveryTracker(other.paths.length, run.window);
  const besideRequests = new Requests(run.window, job.measureMs);
  const stop = receive({ pathPrefix: `/${other.app}/`, tracker: beside, clock: run.clock });
  try {
    const first = await withDeliveries(
      run,
      job,
      new DeliveryTracker(job.paths.length, run.window),
      async (tracker) => {
        await Promise.all([
          closedSending(run, job.app, job.inFlight, job.slotTimeoutMs, tracker),
          closedSending(run, other.app, other.inFlight, job.slotTimeoutMs, beside, besideRequests),
        ]);
      },
      () => beside.drained(),
    );
    return {
      ...first,
      beside: {
        requests: besideRequests.counts,
        deliveries: beside.counts(first.deliveries?.drainSeconds ?? 0),
      },
    };
  } finally {
    stop();
  }
}

/**
 * Sends at `rate` whatever the answers; due events never sent are `notSent`. POSTs out then are
 * the drain's. A soak's tracker forgets what is done and hands each second's events to main.
 */
export function openLoop(run: Run, job: OpenLoopJob | SoakJob): Promise<JobResult> {
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
export async function neighbour(run: Run, job: NeighbourJob): Promise<JobResult> {
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
