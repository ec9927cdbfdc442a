import {
  DefaultIntrinsics,
  getQuickJS,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten";

/**
 * A customer's transformation in QuickJS, compiled to WebAssembly: its own heap (MEMORY), its
 * own stack, and nothing of the host's. The context has the language's built-ins but typed
 * arrays (whose bytes QuickJS keeps outside its memory limit), and no more:
 * no `process`, `require`, `import`, timers, network or file system, and a `Date` fixed at the
 * run's time (`now`), so the code cannot read a clock. Each run is stopped by QuickJS's
 * interrupt handler once its time budget has passed; the pool (pool.ts) runs this in a worker
 * thread and ends the worker if a run outlives the budget anyway (a large allocation or a
 * native call is not interruptible).
 */

export type SandboxLimits = {
  /** The heap a transformation may use, bytes (TRANSFORMATION_MEMORY_MB). */
  memoryBytes: number;
  /** The time one run may take, milliseconds (TRANSFORMATION_TIMEOUT). */
  timeoutMs: number;
  /**
   * The WebAssembly heap all of a thread's sandboxes share, bytes: a run that grows it past
   * this, or by more than twice `memoryBytes` when it started near it (what other sandboxes
   * keep is not the run's), is stopped as out of memory. None: only the limit on one allocation.
   */
  heapBytes?: number;
};

/** The file name errors name their line in. */
export const FILE_NAME = "transformation.js";
/** QuickJS's own stack: past it a deep recursion is QuickJS's "stack overflow", not the host's. */
const STACK_BYTES = 256 * 1024;
/** The longest a transformation's result may be, as JSON text. */
export const RESULT_MAX_BYTES = 2 * 1024 * 1024;

/** Why a transformation failed, with a message that names the cause and, where known, the line. */
export class TransformationError extends Error {
  constructor(
    override readonly cause: "syntax" | "threw" | "timeout" | "memory" | "invalid" | "busy",
    message: string,
    readonly line: number | null = null,
  ) {
    super(message);
  }
}

let quickjs: Promise<QuickJSWASMModule> | null = null;
/**
 * The size of this thread's WebAssembly heap, which every sandbox in it shares: QuickJS's
 * memory limit refuses one allocation past it, but this build does not count what a runtime
 * holds in all (8 bytes an allocation, and strings built with `+` not at all), so the heap is
 * what says how much a run took. It never shrinks. (quickjs-emscripten keeps the Emscripten
 * module as `module`; the typings leave it out.)
 */
export function heapBytes(quickjs: QuickJSWASMModule): number {
  return (quickjs as unknown as { module: { HEAPU8: Uint8Array } }).module.HEAPU8.buffer.byteLength;
}

/** The WebAssembly module, loaded once per thread. */
export function loadQuickJS(): Promise<QuickJSWASMModule> {
  quickjs ??= getQuickJS();
  return quickjs;
}

/**
 * Runs before the customer's code: `Date` without arguments (and `Date.now()`) is the run's
 * time, set by `__herald_run` from the host; the host's clock is never read. `__herald_run`
 * parses its input, calls `handler`, and returns the result as JSON text, so values cross the
 * boundary as one string each way.
 */
const PRELUDE = `"use strict";
(() => {
  const RealDate = Date;
  let now = 0;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(now).toString();
    return args.length ? new RealDate(...args) : new RealDate(now);
  }
  FixedDate.now = () => now;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  FixedDate.prototype = RealDate.prototype;
  Object.defineProperty(RealDate.prototype, "constructor", { value: FixedDate });
  globalThis.Date = FixedDate;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  // No source compiled at run time (eval, Function and its kin): a parse is one native call,
  // which the time budget cannot interrupt (a megabyte's took 0.3 s). No BigInt function: its
  // arithmetic on large values is as long and as uninterruptible (a literal still makes one;
  // a run that overruns its budget so fails all the same: Sandbox.call).
  const refuse = (what) => function () {
    throw new EvalError(what + " is not available to transformations");
  };
  const kin = [
    Function.prototype,
    Object.getPrototypeOf(function* () {}),
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(async function* () {}),
  ];
  for (const prototype of kin) {
    const stand = refuse("compiling code at run time (Function)");
    stand.prototype = prototype;
    Object.defineProperty(prototype, "constructor", { value: stand });
    if (prototype === Function.prototype) globalThis.Function = stand;
  }
  globalThis.eval = refuse("eval");
  // Nor through a literal's constructor: (1n).constructor("9".repeat(300000)).
  const bigint = refuse("BigInt()");
  bigint.prototype = Object.getPrototypeOf(0n);
  Object.defineProperty(bigint.prototype, "constructor", { value: bigint });
  delete globalThis.BigInt;
  Object.defineProperty(globalThis, "__herald_run", {
    value: (input, at) => {
      now = at;
      if (typeof handler !== "function") throw new TypeError("the transformation defines no function handler(webhook)");
      const result = handler(parse(input));
      return stringify(result === undefined ? null : result);
    },
  });
})();
`;

/** One compiled transformation: a runtime and context of its own, reused run after run. */
export class Sandbox {
  private constructor(
    private readonly module: QuickJSWASMModule,
    private readonly runtime: QuickJSRuntime,
    private readonly context: QuickJSContext,
    private readonly run: QuickJSHandle,
    private readonly limits: SandboxLimits,
  ) {}

  /** Compiles `source`; throws a TransformationError (`syntax`, with its line) when it does not. */
  static async create(source: string, limits: SandboxLimits): Promise<Sandbox> {
    const module = await loadQuickJS();
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(STACK_BYTES);
    // No typed arrays: QuickJS allocates an ArrayBuffer's bytes outside the runtime's memory
    // limit (300 MB in half a second, measured), which would grow the worker's WebAssembly heap
    // past anything the limit promises. A transformation reshapes JSON; it needs none.
    const context = runtime.newContext({ intrinsics: { ...DefaultIntrinsics, TypedArrays: false } });
    try {
      evaluate(context, runtime, PRELUDE, "prelude.js", limits.timeoutMs);
      // The customer's source runs once here, defining `handler` (and whatever else at top level).
      evaluate(context, runtime, source, FILE_NAME, limits.timeoutMs);
      const run = context.getProp(context.global, "__herald_run");
      return new Sandbox(module, runtime, context, run, limits);
    } catch (err) {
      context.dispose();
      runtime.dispose();
      throw err;
    }
  }

  /**
   * Calls `handler(webhook)` with `input` (JSON text) and the run's time; returns its result
   * as JSON text. Throws a TransformationError; after a `timeout` or `memory` one the sandbox
   * should be disposed (its heap may be left in any state).
   */
  call(input: string, at: number): string {
    const { context, runtime } = this;
    const deadline = Date.now() + this.limits.timeoutMs;
    // Stopped at its time, or once the heap has grown past its bound: memory that many small
    // allocations take is not refused one by one (heapBytes), and would grow till the time ran out.
    const bound = Math.max(
      this.limits.heapBytes ?? Number.POSITIVE_INFINITY,
      heapBytes(this.module) + 2 * this.limits.memoryBytes,
    );
    let overgrown = false;
    runtime.setInterruptHandler(() => {
      overgrown = heapBytes(this.module) > bound;
      return overgrown || Date.now() > deadline;
    });
    const argument = context.newString(input);
    const time = context.newNumber(at);
    try {
      const result = context.callFunction(this.run, context.undefined, argument, time);
      if (result.error) throw failure(context, result.error, this.limits, false, overgrown ? bound : null);
      // Far past its budget (twice it) in a native call QuickJS could not interrupt: failed all
      // the same, so what a run may take does not depend on which call took it. Not just past
      // it: a short handler's run, never interrupted, may end late for want of the CPU alone.
      if (Date.now() > deadline + this.limits.timeoutMs) {
        result.value.dispose();
        throw new TransformationError(
          "timeout",
          `the transformation ran past twice its ${this.limits.timeoutMs} ms budget (in one built-in call that could not be stopped sooner)`,
        );
      }
      const text = context.getString(result.value);
      result.value.dispose();
      // Refused here, in the worker: a larger one would cost the service's thread to take.
      if (text.length > RESULT_MAX_BYTES)
        throw new TransformationError(
          "invalid",
          `the transformation returned ${text.length} characters as JSON; ${RESULT_MAX_BYTES} at most`,
        );
      return text;
    } finally {
      argument.dispose();
      time.dispose();
      runtime.removeInterruptHandler();
    }
  }

  dispose(): void {
    this.run.dispose();
    this.context.dispose();
    this.runtime.dispose();
  }
}

function evaluate(
  context: QuickJSContext,
  runtime: QuickJSRuntime,
  code: string,
  file: string,
  timeoutMs: number,
): void {
  const deadline = Date.now() + timeoutMs;
  runtime.setInterruptHandler(() => Date.now() > deadline);
  try {
    const result = context.evalCode(code, file, { type: "global" });
    if (result.error) throw failure(context, result.error, { timeoutMs, memoryBytes: 0 }, true);
    result.value.dispose();
    // As a run's (Sandbox.call): a top level far past its budget in one uninterruptible call fails.
    if (Date.now() > deadline + timeoutMs)
      throw new TransformationError(
        "timeout",
        `the transformation's top level ran past twice its ${timeoutMs} ms budget (in one built-in call that could not be stopped sooner)`,
      );
  } finally {
    runtime.removeInterruptHandler();
  }
}

type Dumped = { name?: string; message?: string; stack?: string; lineNumber?: number };

/** The error a run or compile ended with, as a TransformationError naming its cause and line. */
function failure(
  context: QuickJSContext,
  handle: QuickJSHandle,
  limits: Pick<SandboxLimits, "timeoutMs"> & { memoryBytes: number },
  compiling = false,
  /** The heap bound a run was stopped at, when that is why it was interrupted. */
  overgrownPast: number | null = null,
): TransformationError {
  const dumped = context.dump(handle) as Dumped | string | null;
  handle.dispose();
  const error: Dumped = typeof dumped === "object" && dumped !== null ? dumped : { message: String(dumped) };
  const name = error.name ?? "Error";
  const message = error.message ?? String(dumped);
  const line = lineOf(error);
  const at = line === null ? "" : ` (line ${line})`;
  if (name === "InternalError" && message === "interrupted") {
    const cause = overgrownPast === null ? "timeout" : "memory";
    const budget =
      overgrownPast === null
        ? `the transformation ran past its ${limits.timeoutMs} ms budget`
        : `the transformation grew its worker's memory past ${mb(overgrownPast)}, in many allocations,`;
    const [inner, caller] = framesOf(error);
    // QuickJS names the last line of the interrupted function it recorded a position at (the
    // function's first, or the last that could have thrown), not always the loop's own: said
    // as such, with the line that called it.
    if (inner && inner.name !== "<eval>") {
      const fn = inner.name === "<anonymous>" ? "an anonymous function" : `\`${inner.name}\``;
      const from = caller ? `, called from line ${caller.line}` : "";
      return new TransformationError(
        cause,
        `${budget} inside ${fn}${from} (at line ${inner.line} or later in it)`,
        inner.line,
      );
    }
    return new TransformationError(cause, `${budget}${at}`.replace(/,$/, ""), line);
  }
  if (name === "InternalError" && /out of memory|string too long|stack overflow/.test(message)) {
    const what = message === "stack overflow" ? "its stack" : `its ${mb(limits.memoryBytes)} of memory`;
    return new TransformationError("memory", `the transformation used more than ${what}${at}`, line);
  }
  if (compiling && name === "SyntaxError")
    return new TransformationError("syntax", `SyntaxError: ${message}${at}`, line);
  return new TransformationError("threw", `${name}: ${message}${at}`, line);
}

/** The line in the customer's file where it happened: a syntax error's own, else the stack's first frame there. */
function lineOf(error: Dumped): number | null {
  if (typeof error.lineNumber === "number") return error.lineNumber;
  const frame = new RegExp(`${FILE_NAME.replace(".", "\\.")}:(\\d+)`).exec(error.stack ?? "");
  return frame ? Number(frame[1]) : null;
}

/** The stack's frames in the customer's file, innermost first. */
function framesOf(error: Dumped): { name: string; line: number }[] {
  const frame = new RegExp(`at (\\S+) \\(${FILE_NAME.replace(".", "\\.")}:(\\d+)`, "g");
  return [...(error.stack ?? "").matchAll(frame)].map((m) => ({ name: m[1]!, line: Number(m[2]) }));
}

function mb(bytes: number): string {
  return bytes ? `${Math.round(bytes / (1024 * 1024))} MB` : "allowed amount";
}
