import { parentPort, workerData } from "node:worker_threads";
import type { WorkerReply, WorkerRequest, WorkerSettings } from "./protocol.ts";
import { loadQuickJS, Sandbox, TransformationError } from "./sandbox.ts";

/**
 * A transformation worker: compiles customers' transformations and runs them, one at a time,
 * off the service's event loop. Compiled ones are kept by key (owner and source hash), the
 * least recently used closed first past `cached`. A sandbox whose run ran out of time or
 * memory is closed: its heap may be left in any state.
 */
const settings = workerData as WorkerSettings;
const sandboxes = new Map<string, Sandbox>();
/**
 * The WebAssembly heap all of a worker's sandboxes share. Each keeps what its code left in its
 * globals between runs, up to its memory limit. When the heap grows past `heapBytes`, the
 * sandboxes used longest ago are closed until those kept use half of it (their memory is free
 * for reuse: a WebAssembly heap never shrinks), and compiled again when next used.
 */
const HEAP_BYTES = settings.heapBytes;
const quickjs = await loadQuickJS();
// quickjs-emscripten keeps the Emscripten module as `module`; the typings leave it out.
const heap = () => (quickjs as unknown as { module: { HEAPU8: Uint8Array } }).module.HEAPU8.buffer.byteLength;

function keep(key: string, sandbox: Sandbox): void {
  sandboxes.set(key, sandbox);
  while (sandboxes.size > settings.cached) {
    const [oldest, entry] = sandboxes.entries().next().value as [string, Sandbox];
    sandboxes.delete(oldest);
    entry.dispose();
  }
}

let heapSeen = 0;

/** Closes the sandboxes used longest ago until those kept use half of HEAP_BYTES. */
function trim(): void {
  let used = 0;
  for (const sandbox of sandboxes.values()) used += sandbox.memoryUsed();
  for (const [key, sandbox] of sandboxes) {
    if (used <= HEAP_BYTES / 2) return;
    used -= sandbox.memoryUsed();
    forget(key);
  }
}

function forget(key: string): void {
  sandboxes.get(key)?.dispose();
  sandboxes.delete(key);
}

async function answer(request: WorkerRequest): Promise<WorkerReply> {
  const { id, key } = request;
  let sandbox = sandboxes.get(key);
  if (sandbox) {
    // Most recently used last.
    sandboxes.delete(key);
    sandboxes.set(key, sandbox);
  } else {
    if (request.source === undefined) return { id, ok: false, missing: true };
    try {
      sandbox = await Sandbox.create(request.source, settings);
    } catch (err) {
      return failed(id, err);
    }
    keep(key, sandbox);
  }
  if (request.op === "compile") return { id, ok: true, output: null };
  try {
    return { id, ok: true, output: sandbox.call(request.input ?? "null", request.at ?? 0) };
  } catch (err) {
    if (err instanceof TransformationError && (err.cause === "timeout" || err.cause === "memory"))
      forget(key);
    return failed(id, err);
  }
}

function failed(id: number, err: unknown): WorkerReply {
  if (err instanceof TransformationError)
    return { id, ok: false, cause: err.cause, message: err.message, line: err.line };
  return { id, ok: false, cause: "threw", message: String((err as Error)?.message ?? err), line: null };
}

// The WebAssembly's hot paths are warmed before the first customer's run, whose budget they
// would otherwise spend.
const warm = await Sandbox.create(
  "function handler(w) { w.payload = { n: w.payload.n + 1 }; return w; }",
  settings,
);
for (let i = 0; i < 50; i++) warm.call('{"payload":{"n":1}}', 0);
warm.dispose();
parentPort?.on("message", (request: WorkerRequest) => {
  void answer(request).then((reply) => {
    parentPort?.postMessage(reply);
    const now = heap();
    if (now > heapSeen && now > HEAP_BYTES) trim();
    heapSeen = now;
  });
});
parentPort?.postMessage("ready");
