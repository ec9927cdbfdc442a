import type { Worker } from "node:worker_threads";

/** One worker of a pool, as its policy sees it. */
export type WorkerSlot = {
  /** What this worker holds (compiled code, validators) by key: sent again only to one without it. */
  readonly known: Set<string>;
};

/**
 * A worker and its job. `ready` once it has loaded (it posted "ready"): only then is it given
 * work, so a job's time limit is the job's own, not the worker's start-up.
 */
type Slot<J> = WorkerSlot & {
  readonly worker: Worker;
  ready: boolean;
  job: J | null;
  timer: NodeJS.Timeout | null;
};

/** A job for a free worker: what to post it, and how long its worker may go without answering. */
export type Dispatch<J> = {
  job: J;
  request: unknown;
  limitMs: number;
  /** The error the job fails with when its worker is ended for going past `limitMs`; called only then. */
  late: () => Error;
};

/** What a pool decides; the slots do the rest. */
export type SlotPolicy<J, R> = {
  /** The next job for `slot`'s worker, free and ready; undefined when none may go now. */
  next(slot: WorkerSlot): Dispatch<J> | undefined;
  /** `slot`'s worker answered `job` with `reply`. */
  answered(slot: WorkerSlot, job: J, reply: R): void;
  /** `job`'s worker died, or was ended (past its limit: `err` is its `late()`). */
  failed(job: J, err: Error): void;
  /** A worker lost was replaced by a new one (for metrics). */
  replaced(): void;
};

export type WorkerSlotsOptions = {
  workers: number;
  /** Starts one worker (startWorker, from the pool's own module); it posts "ready" once loaded. */
  start: () => Worker;
  /** What the workers are called in errors: `${name} exited with 1`. */
  name: string;
};

/**
 * Worker threads that each run one job at a time, under a time limit: a worker that goes past
 * it, dies, or errs is ended, its job fails, and a new worker takes its place. Which job goes
 * next, what it is sent and how its answer is read is the pool's (`SlotPolicy`); the workers
 * start with the first job (`start`) or at once (`warm`), not before they are wanted.
 */
export class WorkerSlots<J, R> {
  private readonly list: Slot<J>[] = [];
  /** Told when a worker becomes ready. */
  private readonly onReady: (() => void)[] = [];
  private ended = false;

  constructor(
    private readonly options: WorkerSlotsOptions,
    private readonly policy: SlotPolicy<J, R>,
  ) {}

  get slots(): readonly WorkerSlot[] {
    return this.list;
  }

  /** Closed: no worker replaced, none started. */
  get closed(): boolean {
    return this.ended;
  }

  /** Starts the workers, unless they are started already. */
  start(): void {
    if (!this.list.length && !this.ended)
      for (let i = 0; i < this.options.workers; i++) this.list.push(this.spawn());
  }

  /** Starts the workers, and resolves once each has loaded. */
  async warm(): Promise<void> {
    this.start();
    while (this.list.some((slot) => !slot.ready))
      await new Promise<void>((resolve) => this.onReady.push(resolve));
  }

  /** Ends every worker; jobs running on them are left unsettled. */
  async close(): Promise<void> {
    this.ended = true;
    await Promise.all(this.list.map((slot) => slot.worker.terminate()));
  }

  /** Gives each free, ready worker the next job (the policy's), until there is none. */
  dispatch(): void {
    for (const slot of this.list) {
      if (slot.job !== null || !slot.ready) continue;
      const given = this.policy.next(slot);
      if (!given) return;
      slot.job = given.job;
      // Decided after the messages that came meanwhile are read (setImmediate: past the event
      // loop's poll): when this thread's loop stalled, the timer runs first, and the answer may
      // be waiting.
      const timer: NodeJS.Timeout = setTimeout(
        () =>
          setImmediate(() => {
            if (slot.timer === timer) this.replace(slot, given.late());
          }),
        given.limitMs,
      );
      slot.timer = timer;
      slot.worker.postMessage(given.request);
    }
  }

  /**
   * Ends `slot`'s worker: its job, if any, fails with `err`, and a new worker takes its place
   * (the worker died, went past its limit, or should give back its memory).
   */
  replace(slot: WorkerSlot, err: Error): void {
    const lost = slot as Slot<J>;
    const index = this.list.indexOf(lost);
    if (index < 0) return;
    const job = this.take(lost);
    void lost.worker.terminate();
    if (!this.ended) {
      this.policy.replaced();
      this.list[index] = this.spawn();
    }
    if (job !== null) this.policy.failed(job, err);
    this.dispatch();
  }

  private spawn(): Slot<J> {
    const worker = this.options.start();
    const slot: Slot<J> = { worker, ready: false, job: null, timer: null, known: new Set() };
    worker.unref();
    worker.on("message", (reply: R | "ready") => {
      if (reply !== "ready") return this.answered(slot, reply);
      slot.ready = true;
      for (const ready of this.onReady.splice(0)) ready();
      this.dispatch();
    });
    worker.on("error", (err) => this.replace(slot, err));
    worker.on("exit", (code) => {
      if (!this.ended && this.list.includes(slot))
        this.replace(slot, new Error(`${this.options.name} exited with ${code}`));
    });
    return slot;
  }

  private answered(slot: Slot<J>, reply: R): void {
    const job = this.take(slot);
    if (job === null) return;
    this.policy.answered(slot, job, reply);
    this.dispatch();
  }

  /** `slot`'s job, taken off it with its timer. */
  private take(slot: Slot<J>): J | null {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    return job;
  }
}
