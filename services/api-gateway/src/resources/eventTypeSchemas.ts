import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { ApiError } from "../http/errors.ts";

/**
 * JSON Schemas that accounts attach to event types. Each is checked against the meta-schema
 * and compiled at creation, so a bad schema is a 400 then, never a surprise at send time.
 * Compiled validators are cached by event type and version (`updated_at`).
 *
 * One shared Ajv only checks schemas against the meta-schema, which keeps nothing of the
 * schema checked. Each schema is compiled on an Ajv of its own (about a millisecond), dropped
 * with it: a shared instance would keep every schema it compiled, the ones that failed too
 * (the editor checks one as the user types), would register the `$id`s inside one account's
 * schema for every other account's `$ref`s, and removing a schema whose `$id` is the
 * meta-schema's would remove the meta-schema.
 */
const options = { allErrors: true, strict: false, addUsedSchema: false } as const;
const meta = new Ajv({ ...options, validateSchema: true });
addFormats.default(meta);

function compiler(): Ajv {
  const ajv = new Ajv({ ...options, validateSchema: false });
  addFormats.default(ajv);
  return ajv;
}

/** How many schemas the shared instance holds: constant however many schemas were checked. */
export function sharedSchemaCount(): number {
  const held = meta as unknown as { _cache: Map<unknown, unknown>; schemas: object; refs: object };
  return held._cache.size + Object.keys(held.schemas).length + Object.keys(held.refs).length;
}

export type Violation = { path: string; message: string };

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

const NOT_OBJECT = "must be a JSON Schema object";

type Checked = { ok: true; validate: ValidateFunction } | { ok: false; problems: Violation[] };

/** Checks `schema` as event types do: a JSON Schema object that the meta-schema accepts and that compiles. */
function check(schema: unknown): Checked {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { ok: false, problems: [{ path: "/", message: NOT_OBJECT }] };
  }
  try {
    if (!meta.validateSchema(schema)) return { ok: false, problems: metaViolations(meta.errors ?? []) };
    return { ok: true, validate: compiler().compile(schema) };
  } catch (err) {
    // Accepted by the meta-schema yet not compilable (an unresolvable $ref, a bad pattern), or
    // a `$schema` this checker does not know.
    return { ok: false, problems: [{ path: "/", message: (err as Error).message }] };
  }
}

/**
 * Every problem of `schema` as a JSON Schema (empty when it is one), for the dashboard's
 * editor: the same check as creating an event type, with nothing kept afterwards.
 */
export function schemaProblems(schema: unknown): Violation[] {
  const checked = check(schema);
  return checked.ok ? [] : checked.problems;
}

export function compileSchema(schema: unknown, param = "schema"): ValidateFunction {
  const checked = check(schema);
  if (checked.ok) return checked.validate;
  const { problems } = checked;
  const message =
    problems[0]?.message === NOT_OBJECT
      ? `schema ${NOT_OBJECT}.`
      : `schema is not a valid JSON Schema: ${problems.map((p) => `${p.path} ${p.message}`).join("; ")}`;
  throw new ApiError(400, "invalid_request_error", "invalid_schema", message, param, problems);
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

export class SchemaCache {
  private readonly compiled = new Map<string, ValidateFunction>();

  /** Every violation of `data` against the type's schema; empty when it matches. */
  check(key: string, schema: unknown, data: unknown): Violation[] {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = compileSchema(schema);
      if (this.compiled.size > 10_000) this.compiled.clear();
      this.compiled.set(key, validate);
    }
    return validate(data) ? [] : (validate.errors ?? []).map(violation);
  }
}
