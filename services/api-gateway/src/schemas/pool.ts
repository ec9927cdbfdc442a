import { createHash } from "node:crypto";
import type { Worker } from "node:worker_threads";
import type { Logger } from "@herald/runtime";
import { type Dispatch, startWorker, type WorkerSlot, WorkerSlots } from "@herald/runtime/worker";
import type { CheckReply, ValidateReply, WorkerReply, WorkerRequest, WorkerSettings } from "./protocol.ts";

export type SchemaPoolOptions = {
  /** Worker threads; each runs one compile or check at a time. */
  workers: number;
  /** The longest a schema may take to check and compile (SCHEMA_COMPILE_TIMEOUT). */
  compileTimeoutMs: number;
  /** The longest one event may take to check against its schema (SCHEMA_VALIDATE_TIMEOUT). */
  validateTimeoutMs: number;
  /** Heap of each worker, MiB: a schema that needs more ends its worker, not the gateway. */
  heapMb: number;
  /** Compiled validators each worker keeps, in estimated bytes. */
  cacheBytes: number;
  /**
   * Requests one account may have waiting from its API keys, and as many again from all its
   * customers' portal sessions, a quarter of that from any one; more are refused (SchemaQueueFull).
   */
  queuePerAccount: number;
};

/** Who asks: an account through its API, or one of its customers' portal sessions. */
export type Requester = string | { account: string; portalSession: string };

/** A check or compile that ran past its time limit or its worker's heap; the worker was replaced. */
export class SchemaTooCostly extends Error {
  constructor(
    readonly limit: "SCHEMA_COMPILE_TIMEOUT" | "SCHEMA_VALIDATE_TIMEOUT" | "memory",
    message: string,
  ) {
    super(message);
  }
}

/** Check answers kept; each holds at most an example within its budget. */
const CHECKS_KEPT = 256;

/** One account has queuePerAccount requests waiting already. */
export class SchemaQueueFull extends Error {}

type Limit = "SCHEMA_COMPILE_TIMEOUT" | "SCHEMA_VALIDATE_TIMEOUT";

type Job = {
  account: string;
  /** The waiting counts this job is one of, each with its cap. */
  caps: [string, number][];
  request: { op: "check"; schema: unknown } | { op: "validate"; key: string; data: unknown };
  /** A validate's schema, sent only to a worker that does not hold its validator yet. */
  schema?: unknown;
  limit: Limit;
  resolve: (reply: WorkerReply) => void;
  reject: (err: Error) => void;
};

/** The worker's script: the bundle beside the gateway's in an image, the TypeScript source here. */
function spawn(settings: WorkerSettings, heapMb: number): Worker {
  const resourceLimits = {
    maxOldGenerationSizeMb: heapMb,
    maxYoungGenerationSizeMb: Math.min(16, heapMb / 4),
  };
  return startWorker({
    from: import.meta.url,
    source: "./worker.ts",
    bundle: "./schema-worker.mjs",
    workerOptions: { workerData: settings, resourceLimits },
  });
}

/**
 * The schema workers, shared fairly between accounts: each account waits in a queue of its
 * own (its API's requests and its portal sessions' taking turns in it), the queues are served
 * in turn, and no account runs on more than all workers but one while another waits. A check
 * past its time limit ends its worker (the only way to stop a synchronous compile) and a new
 * one takes its place (workerSlots.ts in @herald/runtime): one account's schema costs at most
 * its own time limit, on one worker, and never the gateway's event loop.
 */
export class SchemaPool {
  private readonly workers: WorkerSlots<Job, WorkerReply>;
  /** Each account's waiting jobs, by lane (`api`, `portal`); both in the order of their turns. */
  private readonly queues = new Map<string, Map<string, Job[]>>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, number>();
  private nextId = 1;
  /**
   * Checks answered lately, by the schema's JSON: the dashboard's editor checks the same
   * schema again and again.
   */
  private readonly checked = new Map<string, CheckReply>();
  /** What the workers did, for the gateway's metrics. */
  readonly counts = {
    checks: 0,
    checks_cached: 0,
    validations: 0,
    over_limit: 0,
    queue_full: 0,
    workers_replaced: 0,
  };

  constructor(
    private readonly options: SchemaPoolOptions,
    private readonly logger: Logger,
  ) {
    this.workers = new WorkerSlots<Job, WorkerReply>(
      {
        workers: options.workers,
        name: "schema worker",
        start: () => spawn({ cacheBytes: options.cacheBytes }, options.heapMb),
      },
      {
        next: (slot) => this.next(slot),
        answered: (slot, job, reply) => this.finished(slot, job, reply),
        failed: (job, err) => this.lost(job, err),
        replaced: () => this.counts.workers_replaced++,
      },
    );
  }

  /** Checks and compiles `schema`: its problems (none when valid) and its example. */
  async check(requester: Requester, schema: unknown): Promise<CheckReply> {
    const key = createHash("sha256")
      .update(JSON.stringify(schema) ?? "")
      .digest("base64");
    const known = this.checked.get(key);
    if (known) {
      this.counts.checks_cached++;
      return known;
    }
    this.counts.checks++;
    let reply: CheckReply;
    try {
      const answer = await this.ask(requester, {
        request: { op: "check", schema },
        limit: "SCHEMA_COMPILE_TIMEOUT",
      });
      if (answer.op !== "check") throw new Error("a schema worker answered out of turn");
      reply = { op: "check", problems: answer.problems, example: answer.example };
    } catch (err) {
      if (!(err instanceof SchemaTooCostly)) throw err;
      // Not kept: a time limit missed on a busy machine is no verdict on the schema.
      return { op: "check", problems: [{ path: "/", message: err.message }], example: null };
    }
    if (this.checked.size >= CHECKS_KEPT) this.checked.delete(this.checked.keys().next().value as string);
    this.checked.set(key, reply);
    return reply;
  }

  /** Checks `data` against `schema`, whose validator the workers keep under `key` (a type's id and version). */
  async validate(requester: Requester, key: string, schema: unknown, data: unknown): Promise<ValidateReply> {
    const request = { op: "validate" as const, key, data };
    this.counts.validations++;
    // Twice at most: a worker that dropped the validator since is sent the schema the second time.
    for (let tries = 0; tries < 2; tries++) {
      const reply = await this.ask(requester, { request, schema, limit: "SCHEMA_VALIDATE_TIMEOUT" });
      if (reply.op !== "validate") throw new Error("a schema worker answered out of turn");
      if (!("missing" in reply)) return reply;
      for (const slot of this.workers.slots) slot.known.delete(key);
    }
    throw new Error("a schema worker had no validator, even with the schema sent");
  }

  async close(): Promise<void> {
    const terminated = this.workers.close();
    for (const queue of [...this.queues.values()].flatMap((lanes) => [...lanes.values()]))
      for (const job of queue.splice(0)) job.reject(new Error("the gateway is shutting down"));
    await terminated;
  }

  private ask(
    requester: Requester,
    job: Omit<Job, "account" | "caps" | "resolve" | "reject">,
  ): Promise<WorkerReply> {
    if (this.workers.closed) return Promise.reject(new Error("the gateway is shutting down"));
    // The workers start with the first schema asked about, not with the gateway: each is a V8
    // isolate of its own, tens of MB that an installation without schemas would carry for nothing.
    this.workers.start();
    const perAccount = this.options.queuePerAccount;
    const account = typeof requester === "string" ? requester : requester.account;
    const caps: [string, number][] =
      typeof requester === "string"
        ? [[`api ${account}`, perAccount]]
        : [
            [`portal ${requester.portalSession}`, Math.ceil(perAccount / 4)],
            [`portals ${account}`, perAccount],
          ];
    if (caps.some(([key, cap]) => (this.waiting.get(key) ?? 0) >= cap)) {
      this.counts.queue_full++;
      return Promise.reject(new SchemaQueueFull());
    }
    for (const [key] of caps) this.waiting.set(key, (this.waiting.get(key) ?? 0) + 1);
    const lanes = this.queues.get(account) ?? new Map<string, Job[]>();
    const lane = typeof requester === "string" ? "api" : "portal";
    const queue = lanes.get(lane) ?? [];
    return new Promise<WorkerReply>((resolve, reject) => {
      queue.push({ ...job, account, caps, resolve, reject });
      lanes.set(lane, queue);
      this.queues.set(account, lanes);
      this.workers.dispatch();
    });
  }

  /** A job leaves the queue: its place there is free. Counts at zero are dropped, as keys are without end. */
  private left(job: Job): void {
    for (const [key] of job.caps) {
      const count = (this.waiting.get(key) ?? 1) - 1;
      if (count > 0) this.waiting.set(key, count);
      else this.waiting.delete(key);
    }
  }

  /** The worker of `job` died or was ended (workerSlots.ts): the job fails. */
  private lost(job: Job, err: Error): void {
    this.release(job);
    const memory = (err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY";
    job.reject(
      memory
        ? new SchemaTooCostly("memory", `needs more than ${this.options.heapMb} MiB to compile or check`)
        : err instanceof SchemaTooCostly
          ? err
          : new Error(`schema worker failed: ${err.message}`),
    );
  }

  private finished(slot: WorkerSlot, job: Job, reply: WorkerReply): void {
    this.release(job);
    if (reply.warnings.length) {
      this.logger.warn(
        { account: job.account, warnings: reply.warnings, more: reply.warningsMore },
        "schema compiler warnings",
      );
    }
    if (job.request.op === "validate" && !("missing" in reply)) slot.known.add(job.request.key);
    job.resolve(reply);
  }

  /** A job ended: its account runs one fewer. */
  private release(job: Job): void {
    // Dropped at zero: the keys are accounts, without end.
    const left = (this.running.get(job.account) ?? 1) - 1;
    if (left > 0) this.running.set(job.account, left);
    else this.running.delete(job.account);
  }

  /** The next job for an idle worker, taking accounts in turn, with its time limit. */
  private next(slot: WorkerSlot): Dispatch<Job> | undefined {
    const job = this.pick();
    if (!job) return undefined;
    this.running.set(job.account, (this.running.get(job.account) ?? 0) + 1);
    const request: WorkerRequest = { id: this.nextId++, ...job.request };
    const cold = request.op === "validate" && job.schema !== undefined && !slot.known.has(request.key);
    if (cold) request.schema = job.schema;
    // A validation on a worker that must compile the schema first gets the compile's time too:
    // a schema accepted within SCHEMA_COMPILE_TIMEOUT must not fail its events for the compile.
    const timeoutMs =
      job.limit === "SCHEMA_COMPILE_TIMEOUT"
        ? this.options.compileTimeoutMs
        : this.options.validateTimeoutMs + (cold ? this.options.compileTimeoutMs : 0);
    const late = () => {
      this.counts.over_limit++;
      const took = timeoutMs >= 1000 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
      return new SchemaTooCostly(job.limit, `took longer than ${took} (${job.limit})`);
    };
    return { job, request, limitMs: timeoutMs, late };
  }

  /** The first job of the first account in turn that runs on fewer than its share of workers. */
  private pick(): Job | undefined {
    const share = Math.max(1, this.options.workers - 1);
    for (const [account, lanes] of this.queues) {
      if ((this.running.get(account) ?? 0) >= share) continue;
      // The account's lanes take turns too: its API waits behind one portal job at most.
      const [lane, queue] = lanes.entries().next().value as [string, Job[]];
      const job = queue.shift() as Job;
      lanes.delete(lane);
      if (queue.length) lanes.set(lane, queue);
      // Served: to the back of the turn.
      this.queues.delete(account);
      if (lanes.size) this.queues.set(account, lanes);
      this.left(job);
      return job;
    }
    return undefined;
  }
}
