import { compileFilter, FILTER_LIMITS } from "@herald/contracts/filter";
import { overBudget, SCHEMA_LIMITS } from "../../services/api-gateway/src/schemas/budget.ts";
import { exampleFromSchema } from "../../services/api-gateway/src/schemas/example.ts";
import { PATTERN_MAX } from "../../services/api-gateway/src/schemas/regex.ts";
import { bytesOf, text } from "./largestText.ts";

/**
 * The largest legal shapes of the free-form fields the API gives limits of their own (a
 * `filter`, an event type's `schema`), for the API fuzzer's largest values (largest.ts): each
 * found by growing it against the gateway's own checks until one more part, or one more
 * character, would be refused.
 */
/**
 * The largest n ≤ max for which `build(n)` is `legal`, given that a larger one never is when a
 * smaller one is not: doubling, then halving, so that nothing much larger than legal is built.
 */
function largestCount(
  build: (n: number) => unknown,
  legal: (value: unknown) => boolean,
  max: number,
): number {
  let hi = 1;
  while (hi <= max && legal(build(hi))) hi *= 2;
  let lo = Math.floor(hi / 2);
  hi = Math.min(hi - 1, max);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (legal(build(mid))) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Shapes made to the limit of `legal`: first as many parts as it takes, then each part as long. */
function fitted(
  build: (count: number, length: number) => unknown,
  legal: (value: unknown) => boolean,
  maxCount: number,
  maxLength: number,
): unknown {
  const count = largestCount((n) => build(n, 0), legal, maxCount);
  const value = build(
    count,
    largestCount((n) => build(count, n), legal, maxLength),
  );
  if (!legal(value)) throw new Error(`a largest shape is not legal: ${JSON.stringify(value).slice(0, 200)}`);
  return value;
}

const legalFilter = (value: unknown): boolean => {
  try {
    compileFilter(value);
    return true;
  } catch {
    return false;
  }
};

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

/** Filters at FILTER_LIMITS: the most characters, conditions, `$in` values, path segments and nesting. */
function largestFilters(): unknown[] {
  const { inValues, segments, size } = FILTER_LIMITS;
  const filters: unknown[] = [
    // 12 × {"data":{"$in":[100 × {}]}}: 3,837 characters.
    fitted(
      (n) => ({ $or: times(n, () => ({ data: { $in: times(inValues, () => ({})) } })) }),
      legalFilter,
      1000,
      0,
    ),
  ];
  for (const style of ["plain", "quotes", "multibyte", "astral"] as const) {
    const value = (length: number, i: number) => text(length, style, i);
    filters.push(
      // As many conditions as it holds, each on a path of the most segments.
      fitted(
        (n, length) =>
          Object.fromEntries(
            times(n, (i) => [
              ["data", ...times(segments - 2, () => "a"), `k${i}`].join("."),
              value(length, i),
            ]),
          ),
        legalFilter,
        size,
        size,
      ),
      // The most values in one `$in`.
      fitted(
        (n, length) => ({ "data.tags": { $in: times(n, (i) => value(length, i)) } }),
        legalFilter,
        size,
        size,
      ),
      // Nested as deep as it goes: $and in $or in $and…, a `$not` of an `$in` at the bottom.
      fitted(
        (n, length) => {
          let filter: unknown = { "data.x": { $not: { $in: times(inValues, (i) => value(length, i)) } } };
          for (let i = 0; i < n; i++) filter = { [i % 2 ? "$or" : "$and"]: [filter] };
          return filter;
        },
        legalFilter,
        64,
        size,
      ),
    );
  }
  return filters;
}

const legalSchema = (value: unknown): boolean => {
  if (bytesOf(value) > SCHEMA_LIMITS.bytes || overBudget(value as Record<string, unknown>)) return false;
  try {
    exampleFromSchema(value);
    return true;
  } catch {
    return false;
  }
};

/** An RE2 pattern of exactly PATTERN_MAX characters, matching none of the keys the fillers make. */
function longestPattern(seed: number): string {
  let alternatives = "";
  for (let i = 0; alternatives.length < PATTERN_MAX; i++) alternatives += `|_${seed}_${i}`;
  const head = "^(?:";
  const body = alternatives.slice(1, 1 + PATTERN_MAX - head.length - 2);
  return `${head}${body.replace(/\|$/, "_")})$`;
}

/** Schemas at SCHEMA_LIMITS (bytes, depth, subschemas at one place) and at the example's budget. */
function largestSchemas(): unknown[] {
  const { bytes, depth } = SCHEMA_LIMITS;
  const schemas: unknown[] = [];
  for (const style of ["plain", "quotes", "multibyte"] as const) {
    const words = (length: number, seed = 0) => text(length, style, seed);
    schemas.push(
      // As many properties as the example takes, each described at length.
      fitted(
        (n, length) => ({
          type: "object",
          properties: Object.fromEntries(
            times(n, (i) => [`prop_${i}`, { type: "string", maxLength: 64, description: words(length, i) }]),
          ),
        }),
        legalSchema,
        bytes,
        bytes,
      ),
      // Nested as deep as the schema may be.
      fitted(
        (n, length) => {
          let schema: Record<string, unknown> = { type: "object", description: words(length) };
          for (let i = 0; i < n; i++) schema = { type: "object", properties: { [`level_${i}`]: schema } };
          return schema;
        },
        legalSchema,
        depth,
        bytes,
      ),
      // As many subschemas applying at one place as the budget allows.
      fitted(
        (n, length) => ({
          $defs: { o: { type: "object", description: words(length) } },
          anyOf: times(n, () => ({ $ref: "#/$defs/o" })),
        }),
        legalSchema,
        bytes,
        bytes,
      ),
      // One description of the whole size.
      fitted((_, length) => ({ type: "object", description: words(length) }), legalSchema, 0, bytes),
      // An enum of as many values as fit.
      fitted(
        (n, length) => ({
          type: "object",
          properties: { kind_: { enum: times(n, (i) => `${i}${words(length, i)}`) } },
        }),
        legalSchema,
        bytes,
        64,
      ),
    );
  }
  // Patterns of the longest length, as many as fit: on properties, and on every key of the data.
  schemas.push(
    fitted(
      (n) => ({
        type: "object",
        properties: Object.fromEntries(
          times(n, (i) => [`code_${i}`, { type: "string", pattern: longestPattern(i) }]),
        ),
      }),
      legalSchema,
      bytes,
      0,
    ),
    fitted(
      (n) => ({
        type: "object",
        patternProperties: Object.fromEntries(times(n, (i) => [longestPattern(i), { type: "string" }])),
      }),
      legalSchema,
      bytes,
      0,
    ),
  );
  return schemas;
}

/** Free-form fields the API gives limits of their own, by name: their largest legal shapes, made once. */
const KNOWN_SHAPES: Record<string, () => unknown[]> = { filter: largestFilters, schema: largestSchemas };
const made = new Map<string, unknown[]>();
export function knownShapes(name: string): unknown[] | null {
  if (!KNOWN_SHAPES[name]) return null;
  if (!made.has(name)) made.set(name, KNOWN_SHAPES[name]!());
  return made.get(name)!;
}
