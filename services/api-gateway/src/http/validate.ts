import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { ApiError, invalid } from "./errors.ts";

/**
 * Request validation. The same JSON schemas validate requests and make the OpenAPI document.
 * JSON bodies are validated as they are; form bodies and query strings carry only strings, so
 * their validator coerces ("5" → 5, "true" → true) before checking.
 */
const strict = new Ajv({ allErrors: false, strict: false, useDefaults: true });
const coercing = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: "array" });
for (const ajv of [strict, coercing]) addFormats.default(ajv);

const cache = new WeakMap<object, { strict: ValidateFunction; coercing: ValidateFunction }>();

function compiled(schema: object) {
  let entry = cache.get(schema);
  if (!entry) {
    entry = { strict: strict.compile(schema), coercing: coercing.compile(schema) };
    cache.set(schema, entry);
  }
  return entry;
}

/** `/headers/X-Foo` → `headers[X-Foo]`, `/event_types/0` → `event_types[0]`. */
export function paramName(pointer: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  const [head, ...rest] = parts;
  return (head ?? "") + rest.map((p) => `[${p}]`).join("");
}

function join(base: string, child: string): string {
  return base ? `${base}[${child}]` : child;
}

export function toApiError(error: ErrorObject, prefix = ""): ApiError {
  const at = paramName(error.instancePath);
  const param = prefix && !at ? prefix : join(prefix, at);
  switch (error.keyword) {
    case "required": {
      const name = join(param, (error.params as { missingProperty: string }).missingProperty);
      return new ApiError(
        400,
        "invalid_request_error",
        "parameter_missing",
        `Missing required parameter: ${name}.`,
        name,
      );
    }
    case "additionalProperties": {
      const name = join(param, (error.params as { additionalProperty: string }).additionalProperty);
      return new ApiError(
        400,
        "invalid_request_error",
        "parameter_unknown",
        `Received unknown parameter: ${name}.`,
        name,
      );
    }
    default:
      return invalid(param || undefined, `Invalid ${param || "body"}: ${error.message ?? "invalid value"}.`);
  }
}

/** Validates (and coerces, when `coerce`) `value` in place; throws the first problem as an ApiError. */
export function validate<T>(
  schema: object,
  value: unknown,
  { coerce, prefix = "" }: { coerce: boolean; prefix?: string },
): T {
  const fn = coerce ? compiled(schema).coercing : compiled(schema).strict;
  if (!fn(value)) throw toApiError(fn.errors![0]!, prefix);
  return value as T;
}
