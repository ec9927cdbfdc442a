import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { ApiError } from "../http/errors.ts";

/**
 * JSON Schemas that accounts attach to event types. Each is checked against the meta-schema
 * and compiled at creation, so a bad schema is a 400 then, never a surprise at send time.
 * Compiled validators are cached by event type and version (`updated_at`).
 *
 * `addUsedSchema: false`: a schema's `$id` is not registered on the shared instance, so two
 * schemas (or two versions of one) with the same `$id` never collide.
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true, addUsedSchema: false });
addFormats.default(ajv);

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
  if (!ajv.validateSchema(schema)) return { ok: false, problems: metaViolations(ajv.errors ?? []) };
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    // Accepted by the meta-schema yet not compilable: an unresolvable $ref, a bad pattern.
    return { ok: false, problems: [{ path: "/", message: (err as Error).message }] };
  }
}

/**
 * Every problem of `schema` as a JSON Schema (empty when it is one), for the dashboard's
 * editor: the same check as creating an event type, with nothing kept afterwards.
 */
export function schemaProblems(schema: unknown): Violation[] {
  const checked = check(schema);
  if (!checked.ok) return checked.problems;
  ajv.removeSchema(schema as object);
  return [];
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
