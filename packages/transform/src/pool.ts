import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { type Dispatch, startWorker, type WorkerSlot, WorkerSlots } from "@herald/runtime/worker";
import { DEPTH, type Job, nextBatch, type Run, type Running } from "./batches.ts";
import type { WorkerBatchReply, WorkerReply } from "./protocol.ts";
import { type SandboxLimits, TransformationError } from "./sandbox.ts";
import { type Party, Turns } from "./turns.ts";
import type { TransformedRequest, WebhookAttempt } from "./webhook.ts";

/**
 * Whose transformation runs: an owner (an endpoint, or an account's try-it sandbox), which
 * compiled transformations are kept by, within an account, which workers are shared by. A
 * string is an owner that is an account of its own.
 */
export type Owner = string | Party;

export type TransformPoolOptions = SandboxLimits & {
  /** Worker threads; each runs one transformation at a time. */
  workers: number;
  /** Compiled transformations each worker keeps. */
  cached: number;
  /** Runs one owner may have waiting; more fail at once (`busy`). */
  queuePerOwner: number;
  /** Runs all of one account's owners may have waiting together; unbounded unless given. */
  queuePerAccount?: number;
  /** Runs the whole pool may have waiting; unbounded unless given. */
  queueTotal?: number;
  /** The WebAssembly heap of each worker, past which it is replaced (worker.ts); 64 MiB unless given. */
  heapBytes?: number;
};

/**
 * Transformations run in worker threads, shared fairly: accounts, and their owners within
 * them, take turns by the worker time their runs took (turns.ts), and no account runs on more
 * than all workers but one while another waits. QuickJS stops a run at its time
 * budget; a run that outlives it anyway (an allocation or a native call is not interrupted)
 * is ended with its worker, which a new one replaces. One customer's code thus costs at most
 * its own budget, on one worker, and never the service's event loop.
 */
export class TransformPool {
  private readonly workers: WorkerSlots<Running, WorkerReply | WorkerBatchReply>;
  private readonly turns: Turns<Job>;
  private nextId = 1;
  private dispatching = false;
  /** What the workers did, for metrics. */
  readonly counts = {
    runs: 0,
    compiles: 0,
    failures: 0,
    workers_replaced: 0,
    queue_full: 0,
    expired_waiting: 0,
    /** Runs given to a worker with others of their owner's, past the first. */
    batched: 0,
    /** Runs of a batch not started once it had taken its budget: they waited their turn again. */
    deferred: 0,
  };

  constructor(private readonly options: TransformPoolOptions) {
    // A run of up to half its budget is quick: such code may use every worker (turns.ts). Not
    // less: a run the machine's load slows, as its worker measures it, should stay quick.
    this.turns = new Turns<Job>(options.timeoutMs / 2);
    this.workers = new WorkerSlots<Running, WorkerReply | WorkerBatchReply>(
      {
        workers: options.workers,
        name: "transformation worker",
        start: () => this.start(),
        depth: DEPTH,
        replyPort: true,
      },
      {
        next: (slot, held) => this.next(slot, held),
        answered: (slot, running, reply) => this.finished(slot, running, reply),
        failed: (running, err) => this.lost(running, err),
        returned: (running) => this.returned(running),
        replaced: () => this.counts.workers_replaced++,
      },
    );
  }

  /** Starts the workers, and resolves once each has loaded QuickJS: a service warms them at start. */
  async warm(): Promise<void> {
    await this.workers.warm();
  }

  /** Compiles `source`, keeping it for runs; throws a TransformationError (`syntax`, with its line). */
  async compile(owner: Owner, source: string, signal?: AbortSignal): Promise<void> {
    this.counts.compiles++;
    const party = partyOf(owner);
    await this.ask({ party, source, key: keyOf(party, source), op: "compile" }, signal);
  }

  /**
   * Runs `handler(webhook)` on `input` at time `at` (the fixed `Date`): the request to make
   * instead, or `cancel`. Throws a TransformationError naming the cause and line; `busy` when
   * no worker was free for it before `signal` ended, or too many of the owner's runs wait.
   */
  async run(
    owner: Owner,
    source: string,
    attempt: WebhookAttempt,
    at: number,
    signal?: AbortSignal,
  ): Promise<TransformedRequest> {
    this.counts.runs++;
    const party = partyOf(owner);
    const result = await this.ask(
      { party, source, key: keyOf(party, source), op: "run", attempt, at },
      signal,
    );
    if (!result) throw new Error("a transformation worker answered a run as a compile");
    return result;
  }

  /**
   * Takes the workers' answers that have come, now: a service whose event loop is busy calls it
   * between its tasks (each attempt's start and end, in the sender), so a transformed request
   * goes out without waiting for the loop to come round to the answer.
   */
  collect(): void {
    this.workers.collect();
  }

  async close(): Promise<void> {
    const terminated = this.workers.close();
    for (const job of this.turns.drain()) job.reject(new Error("shutting down"));
    await terminated;
  }

  private ask(
    job: Omit<Job, "resolve" | "reject" | "signal">,
    signal?: AbortSignal,
  ): Promise<TransformedRequest | null> {
    if (this.workers.closed) return Promise.reject(new Error("shutting down"));
    if (signal?.aborted) return Promise.reject(unserved());
    this.workers.start();
    const full = this.full(job.party);
    if (full) {
      this.counts.queue_full++;
      return Promise.reject(new TransformationError("busy", `${full}; it was not run`));
    }
    return new Promise<TransformedRequest | null>((resolve, reject) => {
      this.enqueue({ ...job, resolve, reject, ...(signal ? { signal } : {}) });
      // An idle worker takes it now; what more this turn asks for goes in one message (dispatchSoon).
      this.workers.collect();
      this.workers.dispatch(true);
      this.dispatchSoon();
    });
  }

  /**
   * Hands out what waits once this turn of the event loop has asked for all it will (at its
   * check phase, not a turn later): runs asked for together, as a service does for the attempts
   * of one read from its broker, go to a worker in one message.
   */
  private dispatchSoon(): void {
    if (this.dispatching) return;
    this.dispatching = true;
    setImmediate(() => {
      this.dispatching = false;
      this.workers.dispatch();
    });
  }

  /** Why no more of `party`'s runs may wait, or null. */
  private full(party: Party): string | null {
    const { queuePerOwner, queuePerAccount, queueTotal } = this.options;
    const owner = this.turns.waiting(party);
    if (owner >= queuePerOwner)
      return `${owner} runs of this transformation are waiting for a worker already`;
    const account = this.turns.waitingOf(party.account);
    if (queuePerAccount !== undefined && account >= queuePerAccount)
      return `${account} runs of this account's transformations are waiting for a worker already`;
    if (queueTotal !== undefined && this.turns.waitingTotal >= queueTotal)
      return `${this.turns.waitingTotal} transformation runs are waiting for a worker already`;
    return null;
  }

  /** Puts `job` in its turn, and out again should its caller's deadline end while it waits. */
  private enqueue(job: Job, first = false): void {
    const { signal } = job;
    if (signal?.aborted) {
      job.cancel?.();
      job.reject(unserved());
      return;
    }
    if (signal && !job.cancel) {
      // Its time ran out while it waited, or waited on a worker behind others: not the code's
      // doing. (Its answer, should it come, is dropped: settle.)
      const onAbort = () => {
        if (!this.turns.remove(job.party, job)) job.abandoned = true;
        this.counts.expired_waiting++;
        job.reject(unserved());
      };
      signal.addEventListener("abort", onAbort, { once: true });
      job.cancel = () => signal.removeEventListener("abort", onAbort);
    }
    this.turns.add(job.party, job, first);
  }

  private start() {
    return startWorker({
      from: import.meta.url,
      source: "./worker.ts",
      bundle: "./transform-worker.mjs",
      workerOptions: {
        workerData: { ...this.options, heapBytes: this.options.heapBytes ?? 64 * 1024 * 1024 },
        // QuickJS's heaps are WebAssembly memory; V8's own heap holds little but messages.
        resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      },
    });
  }

  /**
   * The worker of a run died or was ended (workerSlots.ts): the run fails, and the others given
   * with it (the same owner's code, one of whose runs it was).
   */
  private lost(running: Running, err: Error): void {
    const elapsed = performance.now() - running.started;
    for (const { job, turn } of running.runs) {
      this.turns.done(turn, elapsed / running.runs.length, true);
      this.counts.failures++;
      job.cancel?.();
      if (!job.abandoned)
        job.reject(
          err instanceof TransformationError
            ? err
            : new TransformationError("threw", `the transformation's worker failed: ${err.message}`),
        );
    }
  }

  /**
   * Runs that waited on a worker behind a run that ended it: not theirs to answer for, so they
   * wait again, first in their owners' turns (within their callers' deadlines).
   */
  private returned(running: Running): void {
    for (const { job, turn } of running.runs) {
      this.turns.undone(turn);
      if (!job.abandoned) this.enqueue(job, true);
    }
  }

  private finished(slot: WorkerSlot, running: Running, answer: WorkerReply | WorkerBatchReply): void {
    const replies = "batch" in answer ? answer.batch : [answer];
    // Each answer is its own request's, or none is taken: another owner's request must never
    // go out with this one's transformed URL and headers. (Not seen: a worker answers in order.)
    const inOrder =
      replies.length === running.runs.length && running.runs.every((run, i) => replies[i]!.id === run.id);
    for (const [i, run] of running.runs.entries())
      this.settle(slot, run, inOrder ? replies[i]! : { id: run.id, ok: false, missing: true });
    if (!inOrder) {
      this.workers.retire(slot);
      return;
    }
    // Its heap grew past its bound (worker.ts): only a new worker gives that memory back.
    if (answer.retire) this.workers.retire(slot);
  }

  /**
   * One run's reply: its owner is charged the time its worker measured (not the wait for this
   * thread to read the answer); one that failed for its time or memory strikes its account.
   */
  private settle(slot: WorkerSlot, { job, turn }: Run, reply: WorkerReply): void {
    if ("missing" in reply || "deferred" in reply) {
      // Not run: its charge refunded, its owner's last time left as it was.
      this.turns.undone(turn);
      if ("missing" in reply) slot.known.delete(job.key);
      if (job.abandoned) return;
      // Asked again, first in its owner's turn (and still within its caller's deadline): after
      // `missing` with the source (the worker dropped it since); after `deferred` (its batch had
      // taken its time before it) as it was.
      if ("deferred" in reply) this.counts.deferred++;
      this.enqueue(job, true);
      return;
    }
    const overran = !reply.ok && "cause" in reply && (reply.cause === "timeout" || reply.cause === "memory");
    this.turns.done(turn, reply.ms ?? turn.charged, overran);
    job.cancel?.();
    if (job.abandoned) {
      if (!reply.ok) this.counts.failures++;
      return;
    }
    if (reply.ok) {
      slot.known.add(job.key);
      job.resolve(reply.result);
    } else {
      this.counts.failures++;
      if (reply.cause === "timeout" || reply.cause === "memory") slot.known.delete(job.key);
      job.reject(new TransformationError(reply.cause, reply.message, reply.line));
    }
  }

  /** The next run for `slot`'s worker, with more of its owner's (batches.ts). */
  private next(slot: WorkerSlot, held: readonly Running[]): Dispatch<Running> | undefined {
    const given = nextBatch(slot, held, this.turns, {
      share: Math.max(1, this.workers.slots.length - 1),
      timeoutMs: this.options.timeoutMs,
      id: () => this.nextId++,
    });
    if (given) this.counts.batched += given.job.runs.length - 1;
    return given;
  }
}

function partyOf(owner: Owner): Party {
  return typeof owner === "string" ? { account: owner, owner } : owner;
}

function keyOf(party: Party, source: string): string {
  const hash = createHash("sha256").update(source).digest("base64url").slice(0, 22);
  return `${party.account}/${party.owner}:${hash}`;
}

function unserved(): TransformationError {
  return new TransformationError(
    "busy",
    "no transformation worker was free before the attempt's time ran out; the transformation was not run",
  );
}
