import type { SandboxLimits, TransformationError } from "./sandbox.ts";
import type { TransformedRequest, WebhookAttempt } from "./webhook.ts";

/** What the pool (pool.ts) and its workers (worker.ts) say to each other. */

export type WorkerSettings = SandboxLimits & {
  /** Compiled transformations a worker keeps, least recently used first out. */
  cached: number;
  /** The WebAssembly heap a worker's sandboxes may grow, bytes, before those used longest ago are closed. */
  heapBytes: number;
};

export type WorkerRequest = {
  id: number;
  /** The compiled transformation's key: its owner and the source's hash. */
  key: string;
  /** Sent only to a worker that does not hold `key` compiled yet. */
  source?: string;
  /**
   * `compile`: only compile (and keep) it; `run`: call handler on `attempt` at time `at` (the
   * worker builds the webhook object and reads what handler returned: webhook.ts).
   */
  op: "compile" | "run";
  attempt?: WebhookAttempt;
  at?: number;
};

/**
 * Runs of one owner's code given to a worker at once, run one after another and answered at
 * once (`WorkerBatchReply`): one message each way for them all. After one that fails for its time
 * or memory, the rest are not run but answered `missing`, to be asked again; once the batch has
 * taken `budgetMs`, the rest are not started but answered `deferred`, to wait their turn again.
 */
export type WorkerBatch = { batch: WorkerRequest[]; budgetMs: number };
export type WorkerBatchReply = { batch: WorkerReply[]; retire?: true };

/** `retire`: the worker's heap has grown past `heapBytes`; the pool replaces it after this reply. */
export type WorkerReply = (
  | { id: number; ok: true; result: TransformedRequest | null }
  | { id: number; ok: false; missing: true }
  | { id: number; ok: false; deferred: true }
  | {
      id: number;
      ok: false;
      cause: TransformationError["cause"];
      message: string;
      line: number | null;
    }
) & {
  retire?: true;
  /** How long the worker took over it, ms: what its owner is charged (turns.ts). */
  ms?: number;
};
