import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

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
 * its worker does too, through tsx; a bundled caller's bundle lies where `bundle` says.
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
  // tsx's ESM API, by its package's exports: require.resolve would give its CommonJS build.
  const tsxRoot = dirname(createRequire(from).resolve("tsx/package.json"));
  const exported = JSON.parse(readFileSync(join(tsxRoot, "package.json"), "utf8")).exports["./esm/api"];
  const tsx = pathToFileURL(join(tsxRoot, exported.import.default)).href;
  const source = new URL(options.source, from).href;
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(code, { ...workerOptions, eval: true });
}
