import fc from "fast-check";
import { type FuzzRequest, type Json, made, type Operation } from "./fuzzRequest.ts";
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
 * The API fuzzer's third kind of request (fuzz.ts): well-formed at the largest legal values,
 * walked from the OpenAPI document's schemas, free-form fields left as markers for
 * `materialize` (largest.ts) to fill to the body limit.
 */
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
