import { createHash } from "node:crypto";
import type { Worker } from "node:worker_threads";
import { startWorker } from "@herald/runtime/worker";
import type { WorkerReply, WorkerRequest } from "./protocol.ts";
import { type SandboxLimits, TransformationError } from "./sandbox.ts";
import { inputJson, readResult, type TransformedRequest, type WebhookInput } from "./webhook.ts";

export type TransformPoolOptions = SandboxLimits & {
  /** Worker threads; each runs one transformation at a time. */
  workers: number;
  /** Compiled transformations each worker keeps. */
  cached: number;
  /** Runs one owner may have waiting; more fail at once. */
  queuePerOwner: number;
  /** The WebAssembly heap of each worker, past which it is replaced (worker.ts); 64 MiB unless given. */
  heapBytes?: number;
};

type Job = {
  owner: string;
  key: string;
  source: string;
  op: WorkerRequest["op"];
  input?: string;
  at?: number;
  resolve: (output: string | null) => void;
  reject: (err: Error) => void;
  /** Forgets the job if its caller gave up while it waited. */
  cancel?: () => void;
};

type Slot = {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  known: Set<string>;
};

/**
 * Transformations run in worker threads, shared fairly: each owner (an endpoint, or an
 * account trying one out) waits in a queue of its own, the queues take turns, and no owner
 * runs on more than all workers but one while another waits. QuickJS stops a run at its time
 * budget; a run that outlives it anyway (an allocation or a native call is not interrupted)
 * is ended with its worker, which a new one replaces. One customer's code thus costs at most
 * its own budget, on one worker, and never the service's event loop.
 */
export class TransformPool {
  private readonly slots: Slot[] = [];
  /** Told when a worker becomes ready. */
  private readonly onReady: (() => void)[] = [];
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Map<string, number>();
  private nextId = 1;
  private closed = false;
  /** What the workers did, for metrics. */
  readonly counts = { runs: 0, compiles: 0, failures: 0, workers_replaced: 0, queue_full: 0 };

  constructor(private readonly options: TransformPoolOptions) {}

  /** Starts the workers, and resolves once each has loaded QuickJS: a service warms them at start. */
  async warm(): Promise<void> {
    this.startWorkers();
    while (this.slots.some((slot) => !slot.ready))
      await new Promise<void>((resolve) => this.onReady.push(resolve));
  }

  private startWorkers(): void {
    if (!this.slots.length && !this.closed)
      for (let i = 0; i < this.options.workers; i++) this.slots.push(this.start());
  }

  /** Compiles `source`, keeping it for runs; throws a TransformationError (`syntax`, with its line). */
  async compile(owner: string, source: string): Promise<void> {
    this.counts.compiles++;
    await this.ask({ owner, source, key: keyOf(owner, source), op: "compile" });
  }

  /**
   * Runs `handler(webhook)` on `input` at time `at` (the fixed `Date`): the request to make
   * instead, or `cancel`. Throws a TransformationError naming the cause and line.
   */
  async run(owner: string, source: string, input: WebhookInput, at: number, signal?: AbortSignal) {
    this.counts.runs++;
    const json = inputJson(input);
    const output = await this.ask(
      { owner, source, key: keyOf(owner, source), op: "run", input: json, at },
      signal,
    );
    return readResult(output ?? "null", input) satisfies TransformedRequest;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of [...this.queues.values()].flat()) job.reject(new Error("shutting down"));
    this.queues.clear();
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private ask(job: Omit<Job, "resolve" | "reject">, signal?: AbortSignal): Promise<string | null> {
    if (this.closed) return Promise.reject(new Error("shutting down"));
    if (signal?.aborted) return Promise.reject(overBudget(this.options.timeoutMs));
    this.startWorkers();
    const queue = this.queues.get(job.owner) ?? [];
    if (queue.length >= this.options.queuePerOwner) {
      this.counts.queue_full++;
      return Promise.reject(
        new TransformationError("timeout", `${queue.length} runs of this transformation are waiting already`),
      );
    }
    return new Promise<string | null>((resolve, reject) => {
      const entry: Job = { ...job, resolve, reject };
      if (signal) {
        const onAbort = () => {
          const waiting = this.queues.get(job.owner);
          const at = waiting?.indexOf(entry) ?? -1;
          if (at < 0) return;
          waiting?.splice(at, 1);
          if (!waiting?.length) this.queues.delete(job.owner);
          reject(overBudget(this.options.timeoutMs));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        entry.cancel = () => signal.removeEventListener("abort", onAbort);
      }
      queue.push(entry);
      this.queues.set(job.owner, queue);
      this.dispatch();
    });
  }

  private start(): Slot {
    const worker = startWorker({
      from: import.meta.url,
      source: "./worker.ts",
      bundle: "./transform-worker.mjs",
      workerOptions: {
        workerData: { ...this.options, heapBytes: this.options.heapBytes ?? 64 * 1024 * 1024 },
        // QuickJS's heaps are WebAssembly memory; V8's own heap holds little but messages.
        resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      },
    });
    const slot: Slot = { worker, ready: false, job: null, timer: null, known: new Set() };
    worker.unref();
    worker.on("message", (reply: WorkerReply | "ready") => {
      if (reply !== "ready") return this.finished(slot, reply);
      slot.ready = true;
      for (const ready of this.onReady.splice(0)) ready();
      this.dispatch();
    });
    worker.on("error", (err) => this.lost(slot, err));
    worker.on("exit", (code) => {
      if (!this.closed && this.slots.includes(slot))
        this.lost(slot, new Error(`transformation worker exited with ${code}`));
    });
    return slot;
  }

  /** The worker of `slot` died or was stopped: its job fails, and a new worker takes its place. */
  private lost(slot: Slot, err: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    const job = this.release(slot);
    void slot.worker.terminate();
    if (!this.closed) {
      this.counts.workers_replaced++;
      this.slots[index] = this.start();
    }
    if (job) {
      this.counts.failures++;
      job.reject(
        err instanceof TransformationError
          ? err
          : new TransformationError("threw", `the transformation's worker failed: ${err.message}`),
      );
    }
    this.dispatch();
  }

  private finished(slot: Slot, reply: WorkerReply): void {
    const job = this.release(slot);
    if (!job) return;
    if (reply.ok) {
      slot.known.add(job.key);
      job.resolve(reply.output);
    } else if ("missing" in reply) {
      // The worker dropped it since: asked again, with the source.
      slot.known.delete(job.key);
      this.queues.set(job.owner, [job, ...(this.queues.get(job.owner) ?? [])]);
    } else {
      this.counts.failures++;
      if (reply.cause === "timeout" || reply.cause === "memory") slot.known.delete(job.key);
      job.reject(new TransformationError(reply.cause, reply.message, reply.line));
    }
    // Its heap grew past its bound (worker.ts): only a new worker gives that memory back.
    if (reply.retire) this.lost(slot, new Error("its heap grew past its bound"));
    else this.dispatch();
  }

  private release(slot: Slot): Job | null {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    if (job) {
      const left = (this.running.get(job.owner) ?? 1) - 1;
      if (left > 0) this.running.set(job.owner, left);
      else this.running.delete(job.owner);
    }
    return job;
  }

  /** Gives each idle worker the next job, owners in turn. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job || !slot.ready) continue;
      const job = this.next();
      if (!job) return;
      job.cancel?.();
      slot.job = job;
      this.running.set(job.owner, (this.running.get(job.owner) ?? 0) + 1);
      const cold = !slot.known.has(job.key);
      const request: WorkerRequest = {
        id: this.nextId++,
        key: job.key,
        op: job.op,
        ...(cold ? { source: job.source } : {}),
        ...(job.input === undefined ? {} : { input: job.input, at: job.at }),
      };
      // QuickJS interrupts a run at its budget; the worker is ended if it has not answered by
      // twice that (and the compile's budget too when it compiles first), and UNANSWERED_MS.
      // Decided after the messages that came meanwhile are read (setImmediate: past the event
      // loop's poll): when this thread's loop stalled, the timer runs first, and the answer may
      // be waiting.
      const budget = this.options.timeoutMs * (cold ? 2 : 1);
      const late = () => {
        if (slot.job === job) this.lost(slot, overBudget(this.options.timeoutMs));
      };
      slot.timer = setTimeout(() => setImmediate(late), budget * 2 + UNANSWERED_MS);
      slot.worker.postMessage(request);
    }
  }

  private next(): Job | undefined {
    const share = Math.max(1, this.slots.length - 1);
    for (const [owner, queue] of this.queues) {
      if ((this.running.get(owner) ?? 0) >= share) continue;
      const job = queue.shift() as Job;
      // Served: to the back of the turn.
      this.queues.delete(owner);
      if (queue.length) this.queues.set(owner, queue);
      return job;
    }
    return undefined;
  }
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

function keyOf(owner: string, source: string): string {
  return `${owner}:${createHash("sha256").update(source).digest("base64url").slice(0, 22)}`;
}

function overBudget(timeoutMs: number): TransformationError {
  return new TransformationError("timeout", `the transformation ran past its ${timeoutMs} ms budget`);
}
