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
 * The path (keys from the root) of a key or string PostgreSQL cannot store in a JSON value, or
 * null when it can store all of it. Iterative and linear in the value's size: a body nested
 * thousands deep, or a million elements wide, costs what reading it costs, and no stack.
 */
export function unstorableAt(root: unknown): string[] | null {
  if (typeof root === "string") return UNSTORABLE.test(root) ? [] : null;
  // Containers met so far, each with its parent's index and its key there: a path is built
  // only for what is found.
  const parents: number[] = [];
  const keys: string[] = [];
  const pathTo = (node: number, last: string): string[] => {
    const path = [last];
    for (let n = node; n >= 0; n = parents[n]!) path.push(keys[n]!);
    return path.reverse();
  };
  const pending: [unknown, number][] = [[root, -1]];
  // One item of a container: found, or its contents to look at later.
  const visit = (item: unknown, node: number, key: () => string): string[] | null => {
    if (typeof item === "string") return UNSTORABLE.test(item) ? pathTo(node, key()) : null;
    if (item && typeof item === "object") {
      parents.push(node);
      keys.push(key());
      pending.push([item, parents.length - 1]);
    }
    return null;
  };
  while (pending.length) {
    const [value, node] = pending.pop()!;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const found = visit(value[i], node, () => String(i));
        if (found) return found;
      }
    } else if (value && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        if (UNSTORABLE.test(key)) return pathTo(node, key);
        const found = visit(item, node, () => key);
        if (found) return found;
      }
    }
  }
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** A character of a JSON number after its first: digits, `.`, `e`, `E`, `+`, `-`. */
const inNumber = (c: number) =>
  isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;

/**
 * The size in UTF-8 bytes of a JSON text (as JSON.stringify writes it) once PostgreSQL's `jsonb`
 * writes it back, the space after each `:` and `,` aside: a number with an exponent comes back
 * in full (`1e308` as 309 digits, `1e-300` as 302 characters), so a megabyte of them would be
 * tens of megabytes stored and sent. Counted generously: mantissa digits, exponent and 3.
 */
export function storedJsonBytes(json: string): number {
  let extra = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < json.length && json.charCodeAt(i) !== QUOTE; i++)
        if (json.charCodeAt(i) === BACKSLASH) i++;
    } else if (isDigit(c) || c === 0x2d) {
      let end = i + 1;
      let e = -1;
      for (; end < json.length && inNumber(json.charCodeAt(end)); end++)
        if (e === -1 && (json.charCodeAt(end) | 0x20) === 0x65) e = end;
      if (e !== -1) {
        let digits = 0;
        for (let j = i; j < e; j++) if (isDigit(json.charCodeAt(j))) digits++;
        const exponent = Math.abs(Number(json.slice(e + 1, end)));
        extra += Math.max(0, digits + exponent + 3 - (end - i));
      }
      i = end - 1;
    }
  }
  return Buffer.byteLength(json) + extra;
}
