import { parentPort, workerData } from "node:worker_threads";
import type { ValidateFunction } from "ajv";
import type { Violation } from "./budget.ts";
import { check, takeWarnings, violations } from "./compile.ts";
import {
  type CheckReply,
  type MissingReply,
  PROBLEMS_SHOWN,
  type ValidateReply,
  VIOLATIONS_SHOWN,
  WARNING_CHARS,
  WARNINGS_SHOWN,
  type WorkerRequest,
  type WorkerSettings,
} from "./protocol.ts";

/**
 * A schema worker: compiles customers' schemas and checks events against them, off the
 * gateway's event loop, under the time limit and heap the pool (pool.ts) gives it. It keeps
 * compiled validators by event type and version, least recently used first out, within a
 * budget of bytes. A compiled validator (with its own Ajv instance, and $refs not inlined)
 * measured 7 to 30 times its schema's JSON, and about 50 KB however small: the estimate errs
 * above both.
 */
const { cacheBytes } = workerData as WorkerSettings;
const BYTES_PER_SCHEMA_BYTE = 40;
const BYTES_PER_VALIDATOR = 64 * 1024;
const cache = new Map<string, { validate: ValidateFunction; cost: number }>();
let cached = 0;

function remember(key: string, validate: ValidateFunction, schema: unknown): void {
  const cost = BYTES_PER_VALIDATOR + JSON.stringify(schema).length * BYTES_PER_SCHEMA_BYTE;
  if (cost > cacheBytes) return;
  while (cached + cost > cacheBytes) {
    const [oldest, entry] = cache.entries().next().value as [string, { cost: number }];
    cache.delete(oldest);
    cached -= entry.cost;
  }
  cache.set(key, { validate, cost });
  cached += cost;
}

function recall(key: string): ValidateFunction | undefined {
  const entry = cache.get(key);
  if (!entry) return undefined;
  // Most recently used last.
  cache.delete(key);
  cache.set(key, entry);
  return entry.validate;
}

/** At most PROBLEMS_SHOWN problems, the rest counted in one more: a 64 KB schema can have thousands. */
function listed(problems: Violation[]): Violation[] {
  if (problems.length <= PROBLEMS_SHOWN) return problems;
  const more = { path: "/", message: `and ${problems.length - PROBLEMS_SHOWN} more problems` };
  return [...problems.slice(0, PROBLEMS_SHOWN), more];
}

function answer(request: WorkerRequest): CheckReply | ValidateReply | MissingReply {
  if (request.op === "check") {
    const checked = check(request.schema);
    return checked.ok
      ? { op: "check", problems: [], example: checked.example }
      : { op: "check", problems: listed(checked.problems), example: null };
  }
  let validate = recall(request.key);
  if (!validate) {
    if (request.schema === undefined) return { op: "validate", missing: true };
    const checked = check(request.schema);
    if (!checked.ok)
      return { op: "validate", schemaProblems: listed(checked.problems), violations: [], more: 0 };
    validate = checked.validate;
    remember(request.key, validate, request.schema);
  }
  let found: ReturnType<typeof violations>;
  try {
    found = violations(validate, request.data);
  } catch (err) {
    // A recursion Ajv could not finish (a $ref loop the budget's analysis cannot see).
    if (!(err instanceof RangeError)) throw err;
    const problem = { path: "/", message: "recurses without end on this data" };
    return { op: "validate", schemaProblems: [problem], violations: [], more: 0 };
  }
  return {
    op: "validate",
    schemaProblems: [],
    violations: found.slice(0, VIOLATIONS_SHOWN),
    more: Math.max(0, found.length - VIOLATIONS_SHOWN),
  };
}

/** Whatever went wrong, an answer: a problem of the schema, not a worker lost and all it kept. */
function answerSafely(request: WorkerRequest): CheckReply | ValidateReply | MissingReply {
  try {
    return answer(request);
  } catch (err) {
    const problem = {
      path: "/",
      message: `could not be checked: ${String((err as Error)?.message).slice(0, 200)}`,
    };
    return request.op === "check"
      ? { op: "check", problems: [problem], example: null }
      : { op: "validate", schemaProblems: [problem], violations: [], more: 0 };
  }
}

parentPort?.on("message", (request: WorkerRequest) => {
  const reply = answerSafely(request);
  const warnings = takeWarnings();
  parentPort?.postMessage({
    id: request.id,
    ...reply,
    warnings: warnings.slice(0, WARNINGS_SHOWN).map((w) => w.slice(0, WARNING_CHARS)),
    warningsMore: Math.max(0, warnings.length - WARNINGS_SHOWN),
  });
});
// Loaded: the pool starts its time limits from here.
parentPort?.postMessage("ready");
