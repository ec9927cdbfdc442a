import { performance } from "node:perf_hooks";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import type { WorkerBatch, WorkerReply, WorkerRequest, WorkerSettings } from "./protocol.ts";
import { heapBytes, loadQuickJS, Sandbox, TransformationError } from "./sandbox.ts";
import { inputJson, readResult, webhookInput } from "./webhook.ts";

/**
 * A transformation worker: compiles customers' transformations and runs them, one at a time,
 * off the service's event loop. Compiled ones are kept by key (owner and source hash), the
 * least recently used closed first past `cached`. A sandbox whose run ran out of time or
 * memory is closed: its heap may be left in any state.
 */
const settings = workerData as WorkerSettings;
const sandboxes = new Map<string, Sandbox>();
/**
 * The WebAssembly heap all of a worker's sandboxes share. QuickJS's memory limit refuses one
 * allocation past it, but this build cannot count what a runtime holds in all (it keeps 8 bytes
 * an allocation, and strings built with `+` not at all): a handler that keeps what it makes in
 * its globals grows the heap run after run. A WebAssembly heap never shrinks, so a worker whose
 * heap has grown past three quarters of `heapBytes` says so with its reply, and the pool ends it
 * and starts a new one: the next run never starts near the bound its own growth is held to
 * (sandbox.ts), so what others' sandboxes keep is not what stops it.
 */
const RETIRE_AT = settings.heapBytes * 0.75;
const retiring = () => heapBytes(quickjs) > RETIRE_AT;
const quickjs = await loadQuickJS();

function keep(key: string, sandbox: Sandbox): void {
  sandboxes.set(key, sandbox);
  while (sandboxes.size > settings.cached) {
    const [oldest, entry] = sandboxes.entries().next().value as [string, Sandbox];
    sandboxes.delete(oldest);
    entry.dispose();
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
  if (request.op === "compile" || !request.attempt) return { id, ok: true, result: null };
  try {
    const input = webhookInput(request.attempt);
    const output = sandbox.call(inputJson(input), request.at ?? 0);
    return { id, ok: true, result: readResult(output, input) };
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
/** `request` answered, with the time this thread took over it, which its owner is charged (turns.ts). */
async function timed(request: WorkerRequest): Promise<WorkerReply> {
  const started = performance.now();
  const reply = await answer(request);
  return { ...reply, ms: performance.now() - started };
}

/** What a batch's answers may carry in all, bytes of bodies, before the rest of it is deferred. */
const BATCH_REPLY_BYTES = 4 * 1024 * 1024;

/**
 * A batch's runs one after another; after one that failed for its time or memory, none more;
 * once the batch has taken its budget, or its answers carry BATCH_REPLY_BYTES, none started
 * (they wait their turn again in the pool). None started either once this worker is to retire.
 */
async function answerAll({ batch, budgetMs }: WorkerBatch): Promise<WorkerReply[]> {
  const replies: WorkerReply[] = [];
  const started = performance.now();
  let stopped = false;
  let bytes = 0;
  for (const request of batch) {
    if (stopped) {
      replies.push({ id: request.id, ok: false, missing: true });
      continue;
    }
    if (retiring() || performance.now() - started >= budgetMs || bytes >= BATCH_REPLY_BYTES) {
      replies.push({ id: request.id, ok: false, deferred: true });
      continue;
    }
    const reply = await timed(request);
    if (reply.ok && reply.result && !reply.result.cancel) bytes += reply.result.body.length;
    replies.push(reply);
    stopped = !reply.ok && "cause" in reply && (reply.cause === "timeout" || reply.cause === "memory");
  }
  return replies;
}

/** Where answers go: the port the pool sent first (WorkerSlots' `replyPort`), else the parent's. */
let replies: MessagePort | null = null;
parentPort?.on("message", (request: WorkerRequest | WorkerBatch | { replyPort: MessagePort }) => {
  if ("replyPort" in request) {
    replies = request.replyPort;
    return;
  }
  const answer = (message: unknown) => (replies ?? parentPort)?.postMessage(message);
  const retire = () => (retiring() ? { retire: true as const } : {});
  // Told to retire already: what it holds besides is given back unstarted, to run elsewhere,
  // not cut short when the pool ends this worker.
  if (!("batch" in request) && retiring())
    return void answer({ id: request.id, ok: false, deferred: true, ...retire() });
  if ("batch" in request) void answerAll(request).then((batch) => answer({ batch, ...retire() }));
  else void timed(request).then((reply) => answer({ ...reply, ...retire() }));
});
parentPort?.postMessage("ready");
