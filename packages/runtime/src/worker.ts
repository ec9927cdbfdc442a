import { Worker, type WorkerOptions } from "node:worker_threads";
import { flagsWithoutTsx, workerBundle } from "./workerBundle.ts";

export {
  type Dispatch,
  type SlotPolicy,
  type WorkerSlot,
  WorkerSlots,
  type WorkerSlotsOptions,
} from "./workerSlots.ts";

/**
 * Starts a worker thread from its TypeScript source here, or from its bundle in an image
 * (scripts/lib/images.json `workers`: each bundle sits beside the service's main.mjs).
 * `from` is the caller's import.meta.url: a caller still in TypeScript runs from source, so
 * its worker does too, bundled at first use (workerBundle.ts); a bundled caller's bundle lies
 * where `bundle` says.
 */
export function startWorker(options: {
  from: string;
  /** The worker's source, relative to `from`. */
  source: string;
  /** The worker's bundle, relative to the service's bundle. */
  bundle: string;
  workerOptions?: WorkerOptions;
}): Worker {
  const { from, workerOptions } = options;
  if (!from.endsWith(".ts")) return new Worker(new URL(options.bundle, from), workerOptions);
  return new Worker(workerBundle(new URL(options.source, from)), {
    execArgv: flagsWithoutTsx(process.execArgv),
    ...workerOptions,
  });
}
