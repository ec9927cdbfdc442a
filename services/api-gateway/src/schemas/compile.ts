import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { overBudget, type Violation } from "./budget.ts";
import { ExampleTooLarge, exampleFromSchema } from "./example.ts";
import { linearRegExp } from "./regex.ts";
import { uniqueItems } from "./uniqueItems.ts";

/**
 * JSON Schemas that accounts attach to event types, checked and compiled. This runs in the
 * schema workers (pool.ts), never on the gateway's event loop.
 *
 * One shared Ajv only checks schemas against the meta-schema, which keeps nothing of the
 * schema checked. Each schema is compiled on an Ajv of its own, dropped with it: a shared
 * instance would keep every schema it compiled, the ones that failed too (the editor checks
 * one as the user types), would register the `$id`s inside one account's schema for every
 * other account's `$ref`s, and removing a schema whose `$id` is the meta-schema's would remove
 * the meta-schema.
 *
 * Ajv's warnings (an unknown `format`, say) are collected for the caller to log through pino,
 * never written to the console: they quote the schema, which is the customer's text.
 */
export type { Violation };

const warnings: string[] = [];
const logger = {
  log: () => {},
  warn: (...args: unknown[]) => void warnings.push(args.map(String).join(" ")),
  error: (...args: unknown[]) => void warnings.push(args.map(String).join(" ")),
};

const options: Options = {
  allErrors: true,
  strict: false,
  addUsedSchema: false,
  // Each $ref a function of its own, not its target's code copied in at every use: inlined, 100
  // uses of one 100-property definition made 3.8 MB of code from a 6.7 KB schema, compiled in 0.8 s.
  inlineRefs: false,
  code: { regExp: linearRegExp },
  logger,
};
const meta = new Ajv({ ...options, validateSchema: true });
addFormats.default(meta);

function compiler(): Ajv {
  // This instance is the schema's alone, so it may keep it: without, `{"$ref": "#"}` (a tree's
  // children) cannot be resolved.
  const ajv = new Ajv({ ...options, addUsedSchema: true, validateSchema: false });
  addFormats.default(ajv);
  // Ajv compares objects in `uniqueItems` pairwise: 20,000 items took 18 s.
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword(uniqueItems);
  return ajv;
}

/** How many schemas the shared instance holds: constant however many schemas were checked. */
export function sharedSchemaCount(): number {
  const held = meta as unknown as { _cache: Map<unknown, unknown>; schemas: object; refs: object };
  return held._cache.size + Object.keys(held.schemas).length + Object.keys(held.refs).length;
}

/** The warnings Ajv gave since the last call, emptied. */
export function takeWarnings(): string[] {
  return warnings.splice(0);
}

/**
 * The meta-schema's complaints, one per place in the schema: `/properties/amount/type` and
 * what is wrong there. An `anyOf` that failed adds nothing to the failures of its branches.
 */
function metaViolations(errors: ErrorObject[]): Violation[] {
  const byPath = new Map<string, string[]>();
  for (const e of errors) {
    const summary = e.keyword === "anyOf" || e.keyword === "oneOf";
    if (summary && errors.some((o) => o !== e && o.instancePath === e.instancePath)) continue;
    const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
    const message = allowed ? `must be one of ${JSON.stringify(allowed)}` : (e.message ?? "is invalid");
    const path = e.instancePath || "/";
    const messages = byPath.get(path) ?? [];
    if (!messages.includes(message)) messages.push(message);
    byPath.set(path, messages);
  }
  return [...byPath].map(([path, messages]) => ({ path, message: messages.join(", or ") }));
}

export const NOT_OBJECT = "must be a JSON Schema object";

export type Checked =
  | { ok: true; validate: ValidateFunction; example: unknown }
  | { ok: false; problems: Violation[] };

/**
 * Checks `schema` as event types do: a JSON Schema object within the budgets, that the
 * meta-schema accepts, that compiles, and whose example can be made.
 */
export function check(schema: unknown): Checked {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { ok: false, problems: [{ path: "/", message: NOT_OBJECT }] };
  }
  try {
    const over = overBudget(schema as Record<string, unknown>);
    if (over) return { ok: false, problems: [over] };
    if (!meta.validateSchema(schema)) return { ok: false, problems: metaViolations(meta.errors ?? []) };
    const validate = compiler().compile(schema);
    return { ok: true, validate, example: exampleFromSchema(schema) };
  } catch (err) {
    // Accepted by the meta-schema yet not compilable (an unresolvable $ref, a pattern RE2 cannot
    // run), a `$schema` this checker does not know, or an example over its budget.
    const message = err instanceof RangeError ? "is too deeply recursive to compile" : (err as Error).message;
    return {
      ok: false,
      problems: [{ path: "/", message: err instanceof ExampleTooLarge ? err.message : message }],
    };
  }
}

/** Each way `data` breaks a compiled schema, where it is in the data. */
export function violations(validate: ValidateFunction, data: unknown): Violation[] {
  return validate(data) ? [] : (validate.errors ?? []).map(violation);
}

function violation(e: ErrorObject): Violation {
  const path = e.instancePath || "/";
  if (e.keyword === "required") {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    return { path: `${e.instancePath}/${prop}`, message: `is required` };
  }
  if (e.keyword === "additionalProperties") {
    const prop = (e.params as { additionalProperty: string }).additionalProperty;
    return { path: `${e.instancePath}/${prop}`, message: "is not allowed by the schema" };
  }
  return { path, message: e.message ?? "is invalid" };
}
