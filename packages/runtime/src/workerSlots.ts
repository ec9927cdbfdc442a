import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from "node:worker_threads";

/** One worker of a pool, as its policy sees it. */
export type WorkerSlot = {
  /** What this worker holds (compiled code, validators) by key: sent again only to one without it. */
  readonly known: Set<string>;
};

/** A job given to a worker, with what its time limit needs. */
type Given<J> = { job: J; limitMs: number; late: () => Error };

/**
 * A worker and its jobs, the first running and the rest in its port, behind it. `ready` once it
 * has loaded (it posted "ready"): only then is it given work, so a job's time limit is the
 * job's own, not the worker's start-up.
 */
type Slot<J> = WorkerSlot & {
  readonly worker: Worker;
  /** Where its answers come, when it answers on a port of its own (`replyPort`). */
  readonly replies: MessagePort | null;
  ready: boolean;
  jobs: Given<J>[];
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
  /**
   * The next job for `slot`'s worker, ready and free, or (with a `depth` over 1) to wait behind
   * `held`, the jobs it holds, running first; undefined when none may go there now.
   */
  next(slot: WorkerSlot, held: readonly J[]): Dispatch<J> | undefined;
  /** `slot`'s worker answered `job` with `reply`. */
  answered(slot: WorkerSlot, job: J, reply: R): void;
  /** `job`'s worker died, or was ended (past its limit: `err` is its `late()`). */
  failed(job: J, err: Error): void;
  /**
   * `job` waited behind another on a worker that died or was ended, and is taken back: it may
   * have started, but nothing of it was answered. Needed only with a `depth` over 1.
   */
  returned?(job: J): void;
  /** A worker lost was replaced by a new one (for metrics). */
  replaced(): void;
};

export type WorkerSlotsOptions = {
  workers: number;
  /** Starts one worker (startWorker, from the pool's own module); it posts "ready" once loaded. */
  start: () => Worker;
  /** What the workers are called in errors: `${name} exited with 1`. */
  name: string;
  /**
   * Jobs a worker may hold at once (1 unless given): past the first, they wait in its port, so
   * the worker goes on to the next without waiting for this thread to read its answer and send
   * more. A waiting job's time limit starts when the one before it is answered.
   */
  depth?: number;
  /**
   * Workers answer on a port of their own, sent them first as `{ replyPort }`: their answers can
   * then be read at once (`collect`), not only once this thread's event loop reaches them.
   */
  replyPort?: boolean;
};

/**
 * Worker threads that each run one job at a time, under a time limit: a worker that goes past
 * it, dies, or errs is ended, its job fails (those waiting behind it are `returned`), and a new
 * worker takes its place. Which job goes next, what it is sent and how its answer is read is the
 * pool's (`SlotPolicy`); the workers start with the first job (`start`) or at once (`warm`), not
 * before they are wanted.
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

  /**
   * Gives each free, ready worker the next job (the policy's), until there is none; then, with a
   * `depth` over 1 and not `idleOnly`, more to those with room behind what they run.
   */
  dispatch(idleOnly = false): void {
    const depth = idleOnly ? 1 : (this.options.depth ?? 1);
    for (const slot of this.list) {
      if (slot.jobs.length || !slot.ready) continue;
      const given = this.policy.next(slot, []);
      if (!given) return;
      this.give(slot, given);
    }
    for (let held = 1; held < depth; held++)
      for (const slot of this.list) {
        if (slot.jobs.length !== held || !slot.ready) continue;
        const given = this.policy.next(
          slot,
          slot.jobs.map(({ job }) => job),
        );
        if (given) this.give(slot, given);
      }
  }

  /**
   * Ends `slot`'s worker: the job it was on, if any, fails with `err` (those behind it are
   * returned), and a new worker takes its place (the worker died, or went past its limit).
   * Answers it gave before it ended are read first: they are answers.
   */
  replace(slot: WorkerSlot, err: Error): void {
    this.end(slot as Slot<J>, err);
  }

  /**
   * Ends `slot`'s worker for its own sake (it should give back its memory), once its answers
   * so far are read: the jobs it still holds are returned, none fails, and a new worker takes
   * its place.
   */
  retire(slot: WorkerSlot): void {
    this.end(slot as Slot<J>, null);
  }

  /**
   * `culprit`: the job `err` is about (past its limit); should its answer be read here after all,
   * the worker was not late, and goes on.
   */
  private end(lost: Slot<J>, err: Error | null, culprit?: J): void {
    if (!this.list.includes(lost)) return;
    if (lost.timer) clearTimeout(lost.timer);
    lost.timer = null;
    // Reading an answer may end the worker itself (one that says it should retire).
    for (let first = lost.jobs[0]; first && lost.replies; first = lost.jobs[0]) {
      const received = receiveMessageOnPort(lost.replies);
      if (!received) break;
      lost.jobs.shift();
      this.policy.answered(lost, first.job, received.message as R);
    }
    const index = this.list.indexOf(lost);
    if (index < 0) return;
    if (culprit !== undefined && lost.jobs[0]?.job !== culprit) {
      this.time(lost);
      this.dispatch();
      return;
    }
    const held = lost.jobs.splice(0);
    lost.replies?.close();
    void lost.worker.terminate();
    if (!this.ended) {
      this.policy.replaced();
      this.list[index] = this.spawn();
    }
    for (const [i, { job }] of held.entries()) {
      if (i === 0 && err) this.policy.failed(job, err);
      else if (this.policy.returned) this.policy.returned(job);
      else this.policy.failed(job, err ?? new Error(`${this.options.name} was retired`));
    }
    this.dispatch();
  }

  private give(slot: Slot<J>, given: Dispatch<J>): void {
    slot.jobs.push({ job: given.job, limitMs: given.limitMs, late: given.late });
    if (slot.jobs.length === 1) this.time(slot);
    slot.worker.postMessage(given.request);
  }

  /** Starts the time limit of `slot`'s first job. */
  private time(slot: Slot<J>): void {
    const first = slot.jobs[0];
    if (!first) return;
    // Decided after the messages that came meanwhile are read (setImmediate: past the event
    // loop's poll): when this thread's loop stalled, the timer runs first, and the answer may
    // be waiting.
    const timer: NodeJS.Timeout = setTimeout(
      () =>
        setImmediate(() => {
          this.collectFrom(slot);
          if (slot.timer === timer) this.end(slot, first.late(), first.job);
        }),
      first.limitMs,
    );
    slot.timer = timer;
  }

  /**
   * Reads the answers that have come on the workers' reply ports (`replyPort`) now, rather than
   * once this thread's event loop reaches them: a caller on a busy loop calls it between its own
   * tasks, so a worker's answer waits for one task, not the rest of the loop's turn.
   */
  collect(): void {
    for (const slot of this.list) this.collectFrom(slot);
  }

  private collectFrom(slot: Slot<J>): void {
    if (!slot.replies) return;
    while (slot.jobs.length && this.list.includes(slot)) {
      const received = receiveMessageOnPort(slot.replies);
      if (!received) return;
      this.answered(slot, received.message as R);
    }
  }

  private spawn(): Slot<J> {
    const worker = this.options.start();
    let replies: MessagePort | null = null;
    if (this.options.replyPort) {
      const channel = new MessageChannel();
      replies = channel.port1;
      worker.postMessage({ replyPort: channel.port2 }, [channel.port2]);
    }
    const slot: Slot<J> = { worker, replies, ready: false, jobs: [], timer: null, known: new Set() };
    worker.unref();
    if (replies) {
      replies.on("message", (reply: R) => this.answered(slot, reply));
      replies.unref();
    }
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

  /** `slot`'s first job answered: the next behind it starts its time limit now. */
  private answered(slot: Slot<J>, reply: R): void {
    const first = slot.jobs.shift();
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (!first) return;
    this.time(slot);
    this.policy.answered(slot, first.job, reply);
    this.dispatch();
  }
}
