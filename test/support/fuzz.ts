import fc from "fast-check";
import { toForm } from "./gateway.ts";
import {
  BODY_LIMIT_BYTES,
  DEPTH_MAX,
  FEW_KIB,
  FREE_SHAPES,
  FreeForm,
  MODEST_COUNT,
  materialize,
  STYLES,
  Text,
  text,
} from "./largest.ts";

/**
 * Requests made from the OpenAPI document, for the API fuzzer: each operation's parameters,
 * query and body from their schemas, of three kinds (Mode): well-formed; hostile in every way
 * a client could be (wrong types, huge and deep values, unicode, NUL and lone surrogates,
 * unknown fields, prototype keys, every content type); or well-formed at the largest legal
 * values, bodies filled to the API's limits (largest.ts).
 */
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema as the document holds it
type Json = any;

export type Operation = { method: string; path: string; op: Json };
export type Mode = "clean" | "hostile" | "largest";
export type FuzzRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What the request was, to print when a property fails. */
  label: string;
};

const deep = (levels: number, leaf: unknown = 1): unknown => {
  let value: unknown = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

/** A value no schema asked for. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "💥".repeat(50),
    "x".repeat(70_000),
    "../../etc/passwd",
    "%E0%A4%A",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "1e309",
    "__proto__",
  ),
  fc.integer(),
  fc.constantFrom(-1, 0, 2 ** 53, -(2 ** 63), 1e308, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 4 }),
  fc.constantFrom(
    deep(30),
    deep(80),
    // Own keys named as the prototype's (a literal would set the prototype instead).
    JSON.parse('{"__proto__":{"admin":true}}'),
    JSON.parse('{"constructor":{"prototype":{"admin":true}}}'),
  ),
);

const stringFor = (s: Json): fc.Arbitrary<string> =>
  s.enum
    ? fc.constantFrom(...(s.enum as string[]))
    : s.format === "date-time"
      ? fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
      : fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });

/** Values for `schema`: of its shape when `clean`, else one in ten a hostile value instead. */
export function valueFor(
  schema: Json,
  known: Record<string, string[]>,
  clean: boolean,
  name = "",
  depth = 0,
): fc.Arbitrary<unknown> {
  const shaped = shapedFor(schema ?? {}, known, clean, name, depth);
  return clean ? shaped : fc.oneof({ arbitrary: shaped, weight: 9 }, { arbitrary: hostileValue, weight: 1 });
}

function shapedFor(
  s: Json,
  known: Record<string, string[]>,
  clean: boolean,
  name: string,
  depth: number,
): fc.Arbitrary<unknown> {
  if (known[name]?.length) return fc.constantFrom(...known[name]!);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (depth > 3) return fc.constant(null);
  switch (type) {
    case "string":
      return stringFor(s);
    case "integer":
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 100_000 });
    case "number":
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: s.minimum ?? -1e6,
        max: s.maximum ?? 1e6,
      });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(valueFor(s.items, known, clean, name, depth + 1), { maxLength: 4 });
    case "object": {
      const props = Object.entries((s.properties ?? {}) as Record<string, Json>);
      if (!props.length)
        return fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
      const record = Object.fromEntries(props.map(([k, v]) => [k, valueFor(v, known, clean, k, depth + 1)]));
      return fc.record(record, { requiredKeys: (s.required ?? []).filter((k: string) => k in record) });
    }
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

/** Whether `schema` holds free-form JSON anywhere, which largestFor leaves to fill to the body limit. */
export function holdsFreeForm(schema: Json, depth = 0): boolean {
  if (!schema || depth > 8 || schema.const !== undefined || schema.enum) return false;
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return branches.some((b) => holdsFreeForm(b, depth + 1));
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("array")) return holdsFreeForm(schema.items, depth + 1);
  if (schema.properties)
    return Object.values(schema.properties as Record<string, Json>).some((p) => holdsFreeForm(p, depth + 1));
  if (types.includes("object") && typeof schema.additionalProperties === "object")
    return holdsFreeForm(schema.additionalProperties, depth + 1);
  return schema.additionalProperties !== false && (types.includes("object") || schema.type === undefined);
}

/** The seed a large value is made from: unbiased, so that two requests seldom make the same. */
const seedArb = fc.noBias(fc.nat());

/**
 * Values for `schema` at their largest legal: strings at `maxLength` (without one, a few KiB),
 * arrays at `maxItems`, maps at `maxProperties` (without, a modest count), integers and
 * numbers at `maximum` or `minimum` (without, the largest there are), every optional property
 * there most of the time, and free-form JSON (an object without `properties`, or no type at
 * all) left as a FreeForm for `materialize` to fill. `known` values are taken as they are, or
 * padded to `maxLength`, for requests to reach past validation.
 */
export function largestFor(
  schema: Json,
  known: Record<string, string[]>,
  name = "",
  depth = 0,
  inUrl = false,
): fc.Arbitrary<unknown> {
  const s = schema ?? {};
  const shaped = largestShaped(s, known, name, depth, inUrl);
  const values = known[name];
  if (!values?.length || (s.type !== "string" && s.type !== undefined)) return shaped;
  const padded = fc
    .constantFrom(...values)
    .map((v) => v + text((s.maxLength ?? v.length) - [...v].length, "plain", v.length));
  return fc.oneof(
    { arbitrary: fc.constantFrom(...values), weight: 3 },
    { arbitrary: padded, weight: 1 },
    { arbitrary: shaped, weight: 1 },
  );
}

function largestShaped(
  s: Json,
  known: Record<string, string[]>,
  name: string,
  depth: number,
  inUrl: boolean,
): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const branches = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => largestShaped(b, known, name, depth, inUrl)));
  const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t: unknown) => t !== "null");
  const value = largestOfType(types[0], s, known, name, depth, inUrl);
  return Array.isArray(s.type) && s.type.includes("null")
    ? fc.oneof({ arbitrary: value, weight: 4 }, { arbitrary: fc.constant(null), weight: 1 })
    : value;
}

function largestOfType(
  type: string | undefined,
  s: Json,
  known: Record<string, string[]>,
  name: string,
  depth: number,
  inUrl: boolean,
): fc.Arbitrary<unknown> {
  if (depth > 8) return fc.constant(null);
  const freeForm = fc
    .tuple(fc.constantFrom(...FREE_SHAPES), seedArb)
    .map(([shape, seed]) => new FreeForm(name, shape, seed, DEPTH_MAX - depth + 1));
  switch (type ?? (s.properties ? "object" : undefined)) {
    case "string":
      return s.format === "date-time"
        ? fc.constantFrom("9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00.000Z")
        : seedArb.map((seed) => new Text(s.maxLength ?? FEW_KIB[inUrl ? "url" : "body"], seed, s.pattern));
    case "integer":
      return fc.constantFrom(s.maximum ?? Number.MAX_SAFE_INTEGER, s.minimum ?? Number.MIN_SAFE_INTEGER);
    case "number":
      return fc.constantFrom(s.maximum ?? Number.MAX_VALUE, s.minimum ?? -Number.MAX_VALUE);
    case "boolean":
      return fc.boolean();
    case "array": {
      const count = s.maxItems ?? MODEST_COUNT;
      const items = fc.array(largestFor(s.items, known, name, depth + 1, inUrl), {
        minLength: count,
        maxLength: count,
      });
      const values = known[name] ?? [];
      if (!values.length) return items;
      // Known values, each once: as many as there are, up to the most the array takes.
      const length = Math.min(count, values.length);
      return fc.oneof(
        { arbitrary: fc.shuffledSubarray(values, { minLength: length, maxLength: length }), weight: 3 },
        { arbitrary: items, weight: 1 },
      );
    }
    case "object": {
      const props = Object.entries((s.properties ?? {}) as Record<string, Json>);
      if (props.length) {
        const required = new Set<string>(s.required ?? []);
        const record = Object.fromEntries(
          props.map(([k, v]) => {
            const value = largestFor(v, known, k, depth + 1, inUrl);
            return [k, required.has(k) ? value : fc.option(value, { nil: undefined, freq: 5 })];
          }),
        );
        return fc
          .record(record)
          .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
      }
      if (s.additionalProperties === false) return fc.constant({});
      if (s.additionalProperties && typeof s.additionalProperties === "object") {
        const count = s.maxProperties ?? MODEST_COUNT;
        return fc
          .array(largestFor(s.additionalProperties, known, name, depth + 1, inUrl), {
            minLength: count,
            maxLength: count,
          })
          .map((values) => Object.fromEntries(values.map((v, i) => [`${name || "key"}-${i}`, v])));
      }
      return freeForm;
    }
    default:
      return freeForm;
  }
}

const CONTENT_TYPES = ["json", "json", "json", "form", "text", "none", "bad-json", "charset"] as const;

/**
 * One request to `operation`, its path parameters from `known` ids mostly. A `clean` one is
 * well-formed throughout (JSON, known ids, values of the documented shape), so that requests
 * reach past validation; a `hostile` one may be hostile anywhere; a `largest` one is
 * well-formed at the largest legal values (largestRequestFor).
 */
export function requestFor(
  operation: Operation,
  known: Record<string, string[]>,
  mode: Mode = "hostile",
): fc.Arbitrary<FuzzRequest> {
  if (mode === "largest") return largestRequestFor(operation, known);
  const clean = mode === "clean";
  const params = (operation.op.parameters ?? []) as Json[];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const bodySchema = operation.op.requestBody?.content?.["application/json"]?.schema;
  const pathArb = fc.record(
    Object.fromEntries(
      pathParams.map((p) => [
        p.name,
        clean && known[p.name]?.length
          ? fc.constantFrom(...known[p.name]!)
          : fc.oneof(
              {
                arbitrary: known[p.name]?.length ? fc.constantFrom(...known[p.name]!) : fc.string(),
                weight: 4,
              },
              {
                arbitrary: fc.string({ unit: "binary", maxLength: 30 }).filter((v) => v.length > 0),
                weight: 1,
              },
              { arbitrary: fc.constantFrom("%E0", "%00", "..", "x".repeat(5000)), weight: 1 },
            ),
      ]),
    ),
  );
  const queryArb = fc.record(
    Object.fromEntries([
      ...queryParams.map((p) => [p.name, valueFor(p.schema, known, clean, p.name)]),
      // An unknown field now and then: each is a 400, which would leave little else tested.
      ...(clean ? [] : [["unknown_field", fc.option(hostileValue, { nil: undefined, freq: 5 })]]),
    ]),
    { requiredKeys: [] },
  );
  const bodyArb = bodySchema
    ? valueFor(bodySchema, known, clean)
    : clean
      ? fc.constant(undefined)
      : fc.option(hostileValue, { nil: undefined });
  return fc
    .tuple(
      pathArb,
      queryArb,
      bodyArb,
      clean ? fc.constant("json" as const) : fc.constantFrom(...CONTENT_TYPES),
      clean ? fc.constant(false) : fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    )
    .map(([pathValues, query, body, contentType, extraField]) => {
      let path = operation.path;
      for (const [name, value] of Object.entries(pathValues)) {
        const raw = value as string;
        // A few go as they are: malformed percent-encoding is the client's to send.
        const encoded = raw.startsWith("%") ? raw : encodeURIComponent(raw);
        path = path.replace(`{${name}}`, encoded);
      }
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
        if (value === undefined) continue;
        search.append(name, typeof value === "string" ? value : JSON.stringify(value));
      }
      const sent =
        extraField && body && typeof body === "object" && !Array.isArray(body)
          ? { ...(body as object), not_a_field: "x" }
          : body;
      const headers: Record<string, string> = {};
      let payload: string | undefined;
      if (operation.method !== "get" && sent !== undefined) {
        if (contentType === "json" || contentType === "charset") {
          headers["content-type"] =
            contentType === "charset" ? "application/json; charset=latin-9" : "application/json";
          payload = JSON.stringify(sent);
        } else if (contentType === "form" && sent && typeof sent === "object" && !Array.isArray(sent)) {
          headers["content-type"] = "application/x-www-form-urlencoded";
          payload = toForm(sent as Record<string, unknown>);
        } else if (contentType === "text") {
          headers["content-type"] = "text/plain";
          payload = typeof sent === "string" ? sent : JSON.stringify(sent);
        } else if (contentType === "bad-json") {
          headers["content-type"] = "application/json";
          payload = `${JSON.stringify(sent)?.slice(0, -1) ?? ""}{`;
        }
      }
      return made(operation.method, path, search, headers, payload);
    });
}

/** The request as sent, with its label: the request, not its 70,000-character values. */
function made(
  method: string,
  path: string,
  search: URLSearchParams,
  headers: Record<string, string>,
  body: string | undefined,
  note = "",
): FuzzRequest {
  const qs = search.toString();
  const fullPath = qs ? `${path}?${qs}` : path;
  const shown = body && body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
  const label = `${note}${method.toUpperCase()} ${fullPath.slice(0, 300)}${fullPath.length > 300 ? `… (${fullPath.length} chars)` : ""} ${headers["content-type"] ?? ""} ${shown ?? ""}`;
  const request: FuzzRequest = { method: method.toUpperCase(), path: fullPath, headers, body, label };
  // How fast-check prints a failing case.
  return Object.assign(request, { [fc.toStringMethod]: () => label });
}

/**
 * A well-formed request to `operation` at the largest legal values (largestFor), as JSON: path
 * parameters from `known`, optional query parameters half the time, header parameters with a
 * `maxLength` at it, and a body whose free-form fields fill it to BODY_LIMIT_BYTES exactly, or
 * one time in ten just over (a 413). Its strings are all of one style, or each of its own.
 */
export function largestRequestFor(
  operation: Operation,
  known: Record<string, string[]>,
): fc.Arbitrary<FuzzRequest> {
  const params = (operation.op.parameters ?? []) as Json[];
  const bodySchema = operation.op.requestBody?.content?.["application/json"]?.schema;
  const byKind = (kind: string) => params.filter((p) => p.in === kind);
  const pathArb = fc.record(
    Object.fromEntries(
      byKind("path").map((p) => [
        p.name,
        known[p.name]?.length
          ? fc.constantFrom(...known[p.name]!)
          : largestFor(p.schema, {}, p.name, 1, true),
      ]),
    ),
  );
  const queryArb = fc.record(
    Object.fromEntries(
      byKind("query").map((p) => {
        const value = largestFor(p.schema, known, p.name, 1, true);
        return [p.name, p.required ? value : fc.option(value, { nil: undefined, freq: 2 })];
      }),
    ),
  );
  // Header values are visible ASCII.
  const headerArb = fc.record(
    Object.fromEntries(
      byKind("header")
        .filter((p) => p.schema?.maxLength)
        .map((p) => [
          p.name,
          fc.option(
            seedArb.map((seed) => text(p.schema.maxLength, "plain", seed)),
            { nil: undefined, freq: 2 },
          ),
        ]),
    ),
  );
  const bodyArb = bodySchema ? largestFor(bodySchema, known) : fc.constant(undefined);
  const overArb = fc.oneof(
    { arbitrary: fc.constant(0), weight: 9 },
    { arbitrary: fc.constantFrom(1, 4096), weight: 1 },
  );
  return fc
    .tuple(pathArb, queryArb, headerArb, bodyArb, fc.constantFrom(...STYLES, "mixed" as const), overArb)
    .map(([pathValues, query, headerValues, body, style, over]) => {
      let path = operation.path;
      for (const [name, value] of Object.entries(pathValues)) {
        const raw = materialize(value, style, 0).value;
        path = path.replace(`{${name}}`, encodeURIComponent(String(raw)));
      }
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
        if (value === undefined) continue;
        const raw = materialize(value, style, 0).value;
        search.append(name, typeof raw === "string" ? raw : JSON.stringify(raw));
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(headerValues))
        if (value !== undefined) headers[name] = value as string;
      const notes: string[] = [style, ...Object.keys(headers)];
      let sent: string | undefined;
      if (operation.method !== "get" && body !== undefined) {
        const { value, shapes } = materialize(body, style, BODY_LIMIT_BYTES + over);
        sent = JSON.stringify(value);
        headers["content-type"] = "application/json";
        notes.push(`${Buffer.byteLength(sent)} bytes`, ...shapes);
      }
      const note = `[largest: ${notes.join(", ")}] `;
      return made(operation.method, path, search, headers, sent, note);
    });
}
