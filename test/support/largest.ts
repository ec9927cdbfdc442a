import { compileFilter, FILTER_LIMITS } from "@herald/contracts/filter";
import { BODY_LIMIT_BYTES } from "../../services/api-gateway/src/http/body.ts";
import { DEPTH_MAX } from "../../services/api-gateway/src/http/storable.ts";
import { overBudget, SCHEMA_LIMITS } from "../../services/api-gateway/src/schemas/budget.ts";
import { exampleFromSchema } from "../../services/api-gateway/src/schemas/example.ts";
import { PATTERN_MAX } from "../../services/api-gateway/src/schemas/regex.ts";

/**
 * The largest legal values, for the API fuzzer's third kind of request: strings at their
 * `maxLength`, and free-form JSON (event `data`, a `filter`, a `schema`) filled up to the API's
 * own limits, the request body to BODY_LIMIT_BYTES exactly. The schema walk (fuzz.ts) leaves
 * markers where these go, drawn small by fast-check; `materialize` makes them from their seeds,
 * once the whole body's size is known.
 */
export { BODY_LIMIT_BYTES, DEPTH_MAX };

/** A string with no `maxLength`: a few KiB in a body, less in a URL. */
export const FEW_KIB = { body: 4096, url: 2048 } as const;
/** Items of an array, or entries of a map, with no `maxItems` or `maxProperties`. */
export const MODEST_COUNT = 64;

export const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "");

/** Numbers in [0, 1) from `seed` (mulberry32): large values are made from a seed, not drawn piece by piece. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(rng: () => number, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

/** What strings are made of: each costs differently as JSON text, in UTF-8 and in UTF-16. */
const UNITS = {
  plain: [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"],
  // Escaped in JSON, most of them: two bytes for one character.
  quotes: ['"', '"', '"', "\\", "'"],
  multibyte: ["é", "€", "中", "ж", "ß"],
  // One code point (what `maxLength` counts), two UTF-16 units, four bytes.
  astral: ["💥", "𝄞", "😀", "🀄"],
  // Control characters, most escaped (\u0001: six bytes for one); none is a NUL.
  controls: ["\u0001", "\u001f", "\t", "\n", "\u007f", "\u2028"],
};
export type Style = keyof typeof UNITS;
export const STYLES = Object.keys(UNITS) as Style[];

/** `length` characters (code points) of `style`, from `seed`. */
export function text(length: number, style: Style, seed: number): string {
  if (length <= 0) return "";
  const rng = random(seed);
  const block = Array.from({ length: Math.min(length, 1024) }, () => pick(rng, UNITS[style]));
  const whole = Math.floor(length / block.length);
  return block.join("").repeat(whole) + block.slice(0, length - whole * block.length).join("");
}

/** Where a string goes: `length` characters, matching `pattern` if it has one. */
export class Text {
  constructor(
    readonly length: number,
    readonly seed: number,
    readonly pattern?: string,
  ) {}
}

/** Where free-form JSON goes: filled by `shape`, or by its own largest shapes if `name` has some. */
export class FreeForm {
  constructor(
    readonly name: string,
    readonly shape: FreeShape,
    readonly seed: number,
    /** How deep it may nest, itself 1: DEPTH_MAX counts from a body field's value. */
    readonly depth: number,
  ) {}
}

export const FREE_SHAPES = [
  "keys",
  "rows",
  "quotes",
  "strings",
  "numbers",
  "extremes",
  "deep",
  "unicode",
  "longKeys",
  "empties",
] as const;
export type FreeShape = (typeof FREE_SHAPES)[number];

/** Items made while their JSON text, comma-separated, fits in `bytes`. */
function fitting<T>(bytes: number, make: (i: number) => T, cost: (item: T) => number = bytesOf): T[] {
  const items: T[] = [];
  let left = bytes;
  for (let i = 0; ; i++) {
    const item = make(i);
    left -= cost(item) + 1;
    if (left < 0) return items;
    items.push(item);
  }
}

/** An object of `shape`, its JSON text at most `bytes` (UTF-8) and most of that, nested at most `depth` deep. */
export function freeForm(
  shape: FreeShape,
  bytes: number,
  seed: number,
  depth: number,
): Record<string, unknown> {
  const rng = random(seed);
  if (bytes < 32) return {};
  if (depth < 4 && shape !== "keys") return freeForm("keys", bytes, seed, depth);
  switch (shape) {
    case "keys":
      // ~100,000 short keys: `"1a2b":7,` is nine bytes.
      return Object.fromEntries(
        fitting(
          bytes - 2,
          (i) => [i.toString(36), i % 10] as const,
          ([key]) => key.length + 4,
        ),
      );
    case "rows":
      return {
        rows: fitting(bytes - 11, (i) => ({
          id: i,
          sku: `SKU-${text(8, "plain", seed + i)}`,
          name: text(
            1 + Math.floor(rng() * 40),
            pick(rng, ["plain", "quotes", "multibyte"] as const),
            seed ^ i,
          ),
          qty: Math.floor(rng() * 1000),
          price: Math.round(rng() * 1e6) / 100,
          tags: ["new", "sale", "gift"].slice(0, Math.floor(rng() * 4)),
          active: rng() < 0.5,
          note: null,
        })),
      };
    case "quotes":
      // Every character escaped: two bytes of JSON each.
      return { text: text(Math.floor((bytes - 11) / 2), "quotes", seed) };
    case "strings":
      return {
        strings: fitting(bytes - 14, () =>
          text(1 + Math.floor(rng() * 200), pick(rng, STYLES), Math.floor(rng() * 2 ** 32)),
        ),
      };
    case "numbers":
      // 100,000 numbers and more.
      return {
        numbers: fitting(bytes - 14, () =>
          pick(rng, [
            () => Math.floor(rng() * 10),
            () => Math.floor((rng() - 0.5) * 2e9),
            () => Math.round(rng() * 1e8) / 100,
            () => rng() * 1e6,
          ])(),
        ),
      };
    case "extremes":
      // The largest and smallest doubles.
      return {
        numbers: fitting(bytes - 14, () =>
          pick(rng, [1e308, -1e308, Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324, -5e-324, 1e-300]),
        ),
      };
    case "deep": {
      // As deep as the API takes, with ~100,000 keys at the bottom.
      let value: unknown = freeForm("keys", bytes - 6 * (depth - 1), seed, 1);
      for (let i = depth - 2; i >= 0; i--) value = i % 2 === 0 ? { d: value } : [value];
      return value as Record<string, unknown>;
    }
    case "unicode": {
      const astral = rng() < 0.5;
      return {
        text: text(Math.floor((bytes - 11) / (astral ? 4 : 3)), astral ? "astral" : "multibyte", seed),
      };
    }
    case "longKeys": {
      const out: Record<string, number> = {};
      const length = Math.floor((bytes - 2) / 8) - 6;
      for (let i = 0; i < 8; i++) out[`${i}${text(length - 1, "plain", seed + i)}`] = i;
      return out;
    }
    case "empties": {
      // `{},` or `[],`: three bytes a value, ~350,000 of them.
      const items: unknown[] = [];
      for (let i = 0; i < Math.floor((bytes - 12) / 3); i++) items.push(i % 2 ? [] : {});
      return { items };
    }
  }
}

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
function knownShapes(name: string): unknown[] | null {
  if (!KNOWN_SHAPES[name]) return null;
  if (!made.has(name)) made.set(name, KNOWN_SHAPES[name]!());
  return made.get(name)!;
}

export type Materialized = {
  value: unknown;
  /** What was made, for the request's label: `data=keys` and the like. */
  shapes: string[];
};

/**
 * `value` with its markers made: strings in `style` ("mixed": each its own), free-form fields
 * of known names in one of their largest shapes, and the others sharing what is left of
 * `target` bytes, the whole value's JSON text then padded to exactly `target` where it can be.
 */
export function materialize(value: unknown, style: Style | "mixed", target: number): Materialized {
  const shapes: string[] = [];
  const open: { marker: FreeForm; slot: Record<string, unknown> }[] = [];
  const make = (v: unknown): unknown => {
    if (v instanceof Text) {
      const own = style === "mixed" ? STYLES[v.seed % STYLES.length]! : style;
      const made = text(v.length, own, v.seed);
      if (!v.pattern || new RegExp(v.pattern, "u").test(made)) return made;
      return text(v.length, "plain", v.seed);
    }
    if (v instanceof FreeForm) {
      const known = knownShapes(v.name);
      if (known) {
        const index = v.seed % known.length;
        shapes.push(`${v.name}=#${index}`);
        return known[index];
      }
      const slot: Record<string, unknown> = {};
      open.push({ marker: v, slot });
      return slot;
    }
    if (Array.isArray(v)) return v.map(make);
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, make(x)]));
    return v;
  };
  const made = make(value);
  if (!open.length) return { value: made, shapes };
  const share = Math.floor((target - bytesOf(made)) / open.length);
  for (const { marker, slot } of open) {
    Object.assign(slot, freeForm(marker.shape, share + 2, marker.seed, marker.depth));
    shapes.push(`${marker.name}=${marker.shape}`);
  }
  // To the byte: one more key, `"~":"xxx…"`, in the last free-form object.
  const last = open.at(-1)!.slot;
  const left = target - bytesOf(made) - (Object.keys(last).length ? 7 : 6);
  if (left >= 0) last["~"] = "x".repeat(left);
  return { value: made, shapes };
}
