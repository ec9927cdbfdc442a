import { BODY_LIMIT_BYTES } from "../../services/api-gateway/src/http/body.ts";
import { DEPTH_MAX } from "../../services/api-gateway/src/http/storable.ts";
import { knownShapes } from "./largestShapes.ts";
import { bytesOf, pick, random, STYLES, type Style, text } from "./largestText.ts";

/**
 * The largest legal values, for the API fuzzer's third kind of request: strings at their
 * `maxLength`, and free-form JSON (event `data`, a `filter`, a `schema`) filled up to the API's
 * own limits, the request body to BODY_LIMIT_BYTES exactly. The schema walk (fuzz.ts) leaves
 * markers where these go, drawn small by fast-check; `materialize` makes them from their seeds,
 * once the whole body's size is known.
 */
export { BODY_LIMIT_BYTES, DEPTH_MAX, STYLES, text };

/** A string with no `maxLength`: a few KiB in a body, less in a URL. */
export const FEW_KIB = { body: 4096, url: 2048 } as const;
/** Items of an array, or entries of a map, with no `maxItems` or `maxProperties`. */
export const MODEST_COUNT = 64;

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
