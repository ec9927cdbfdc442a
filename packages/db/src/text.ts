/**
 * Text PostgreSQL cannot store: NUL (U+0000), refused in `text` and in `jsonb` alike (error
 * 22021 / 22P05), and an unpaired UTF-16 surrogate, which `jsonb` refuses (22P02) and the
 * driver turns into U+FFFD in `text`. Customers' receivers answer with any bytes, and API
 * callers send any JSON: the API refuses such text with a 400 naming the field
 * (`unstorableAt`), and what Herald must keep whatever it holds (a response body) is made
 * storable (`storable`).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what must be found.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/** The text with every character PostgreSQL cannot store replaced by U+FFFD. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, "\uFFFD") : text;
}

export function storableTextOrNull(text: string | null): string | null {
  return text === null ? null : storableText(text);
}

/** A JSON value with storable text in every key and string. */
export function storable<T>(value: T): T {
  if (typeof value === "string") return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storable(v)])) as T;
  return value;
}

/**
 * The path (keys from the root) of the first key or string PostgreSQL cannot store in a JSON
 * value, or null when it can store all of it.
 */
export function unstorableAt(value: unknown, path: string[] = []): string[] | null {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableAt(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) return [...path, key];
      const found = unstorableAt(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
