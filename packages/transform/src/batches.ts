import { performance } from "node:perf_hooks";
import type { Dispatch, WorkerSlot } from "@herald/runtime/worker";
import type { WorkerBatch, WorkerRequest } from "./protocol.ts";
import { TransformationError } from "./sandbox.ts";
import type { Party, Turn, Turns } from "./turns.ts";
import type { TransformedRequest, WebhookAttempt } from "./webhook.ts";

/**
 * What the transformation pool (pool.ts) gives a worker: its jobs, one run or a batch of one
 * owner's quick code at once, with the time the worker has to answer them.
 */

export type Job = {
  party: Party;
  key: string;
  source: string;
  op: WorkerRequest["op"];
  attempt?: WebhookAttempt;
  at?: number;
  resolve: (result: TransformedRequest | null) => void;
  reject: (err: Error) => void;
  /** Its caller's deadline: once it ends, the job no longer waits (`busy`). */
  signal?: AbortSignal;
  /** Stops listening to `signal`: the job is settled. */
  cancel?: () => void;
  /** Its caller stopped waiting (`signal`) while it was on a worker: its answer is dropped. */
  abandoned?: true;
};

/** A job on a worker: its turn (turns.ts), charged what it took when it ends; `id`: its request's. */
export type Run = { job: Job; turn: Turn<Job>; id: number };
/** What a worker was given at once: one run, or a batch of one owner's quick code. */
export type Running = { runs: Run[]; started: number };

/**
 * The most runs of one owner's quick code a worker is given at once. Each run given alone costs
 * a message each way, and on a busy machine this thread's event loop reads an answer tens of
 * milliseconds after it came: that wait, not the runs, bounded one endpoint's transformations
 * (about 180 a second, given one at a time). The worker stops a batch once it has taken a
 * budget's time, and the runs it did not start wait their turn again.
 */
const BATCH_MAX = 32;
/**
 * Jobs a worker holds at most: past the first, an account's quick code behind its own quick code
 * waits in the worker's port, as long as what it holds is estimated at less than a budget's time,
 * so the worker goes on to the next while this thread's loop is yet to read the answers before it.
 */
export const DEPTH = 8;

/**
 * The next run for `slot`'s worker, in turn (turns.ts), with more of its owner's quick code;
 * behind others (`held`), only the same account's quick code behind its quick code, estimated at
 * less than a budget's time in all: a slow run holds up none but its own, and none waits behind
 * one. `share`: the workers an account may have for code not known quick (all but one).
 */
export function nextBatch(
  slot: WorkerSlot,
  held: readonly Running[],
  turns: Turns<Job>,
  { share, timeoutMs, id }: { share: number; timeoutMs: number; id: () => number },
): Dispatch<Running> | undefined {
  const runs = held.flatMap((running) => running.runs);
  const account = runs[0]?.turn.party.account;
  if (runs.length) {
    // Quick as of now (a strike since, or a slow last run, ends it), under a budget in all.
    if (!runs.every((run) => turns.quickNow(run.turn.party))) return undefined;
    if (runs.reduce((ms, run) => ms + run.turn.charged, 0) >= timeoutMs) return undefined;
  }
  const turn = turns.next(share, account);
  if (!turn) return undefined;
  const more = turns.more(turn, BATCH_MAX - 1);
  const given = [turn, ...more].map((t) => ({ job: t.job, turn: t, id: id() }));
  const sent = new Set<string>();
  const requests = given.map(({ job, id }) => {
    const cold = !slot.known.has(job.key) && !sent.has(job.key);
    sent.add(job.key);
    return {
      id,
      key: job.key,
      op: job.op,
      ...(cold ? { source: job.source } : {}),
      ...(job.attempt === undefined ? {} : { attempt: job.attempt, at: job.at }),
    } satisfies WorkerRequest;
  });
  // QuickJS interrupts a run at its budget; the worker is ended if it has not answered by
  // twice that (and the compile's budget too when it compiles first), past the budget a batch
  // may take before its last run starts (worker.ts), and UNANSWERED_MS.
  const compiles = requests.some((r) => r.source !== undefined);
  const limitMs = UNANSWERED_MS + (given.length > 1 ? timeoutMs : 0) + timeoutMs * (compiles ? 2 : 1) * 2;
  return {
    job: { runs: given, started: performance.now() },
    request:
      requests.length === 1 ? requests[0] : ({ batch: requests, budgetMs: timeoutMs } satisfies WorkerBatch),
    limitMs,
    late: () => overBudget(timeoutMs),
  };
}

/**
 * How long past twice its budget a run may go unanswered before its worker is ended. Only a
 * native call QuickJS cannot interrupt (a huge JSON.stringify, an allocation) should ever
 * reach it, and such code loses little by a second more on its one worker. Tighter (100 ms
 * was), a run was ended for want of CPU: a worker starting beside it, compiling QuickJS's
 * WebAssembly, starved it on a machine of two cores; its attempt failed as the customer's
 * transformation_error, and the worker started in its place starved the next.
 */
const UNANSWERED_MS = 1000;

function overBudget(timeoutMs: number): TransformationError {
  return new TransformationError("timeout", `the transformation ran past its ${timeoutMs} ms budget`);
}
