import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { ApiError } from "../http/errors.ts";

/**
 * JSON Schemas that accounts attach to event types. Each is checked against the meta-schema
 * and compiled at creation, so a bad schema is a 400 then, never a surprise at send time.
 * Compiled validators are cached by event type and version (`updated_at`).
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
addFormats.default(ajv);

export type Violation = { path: string; message: string };

export function compileSchema(schema: unknown, param = "schema"): ValidateFunction {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new ApiError(
      400,
      "invalid_request_error",
      "invalid_schema",
      "schema must be a JSON Schema object.",
      param,
    );
  }
  try {
    if (!ajv.validateSchema(schema)) throw new Error(ajv.errorsText(ajv.errors, { dataVar: "schema" }));
    return ajv.compile(schema);
  } catch (err) {
    throw new ApiError(
      400,
      "invalid_request_error",
      "invalid_schema",
      `schema is not a valid JSON Schema: ${(err as Error).message}`,
      param,
    );
  }
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
