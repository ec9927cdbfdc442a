import fc from "fast-check";
import { largestRequestFor } from "./fuzzLargest.ts";
import { type FuzzRequest, type Json, made, type Operation } from "./fuzzRequest.ts";
import { toForm } from "./gateway.ts";

export { holdsFreeForm } from "./fuzzLargest.ts";
export type { FuzzRequest, Operation } from "./fuzzRequest.ts";

/**
 * Requests made from the OpenAPI document, for the API fuzzer: each operation's parameters,
 * query and body from their schemas, of three kinds (Mode): well-formed; hostile in every way
 * a client could be (wrong types, huge and deep values, unicode, NUL and lone surrogates,
 * unknown fields, prototype keys, every content type); or well-formed at the largest legal
 * values, bodies filled to the API's limits (fuzzLargest.ts).
 */
export type Mode = "clean" | "hostile" | "largest";

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
