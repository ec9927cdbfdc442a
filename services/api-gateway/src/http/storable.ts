import { unstorableAt } from "@herald/db/text";
import { invalid } from "./errors.ts";

/**
 * Refuses, with a 400 that names the field, any text PostgreSQL cannot store: a NUL (U+0000)
 * or an unpaired surrogate, anywhere in a path parameter, the query or the body (event `data`
 * and a schema included, keys as well as values). Without this check such a value reaches the
 * database and fails there: a 500, and for an event, its whole group commit retried one by one.
 */
export function checkStorable(parts: Record<string, unknown>[], rawJson?: Buffer): void {
  // The text says so, in a few ms a megabyte: walking a parsed object of 100,000 keys takes
  // hundreds, on the event loop every request shares.
  if (rawJson && parts.length === 1 && plainJsonText(rawJson)) return;
  for (const part of parts) {
    const deep = tooDeepAt(part);
    if (deep !== null) {
      throw invalid(
        deep,
        `${deep} is nested more than ${DEPTH_MAX} levels deep; at most ${DEPTH_MAX}.`,
        "parameter_invalid",
      );
    }
    const path = unstorableAt(part);
    if (!path) continue;
    const [head, ...rest] = path;
    const param = (head ?? "") + rest.map((p) => `[${p}]`).join("");
    throw invalid(
      param,
      `${param} contains a character that cannot be stored: a NUL (\\u0000) or an unpaired UTF-16 surrogate.`,
      "parameter_invalid",
    );
  }
}

/**
 * How deep a body may nest. JSON.parse takes any depth, but what walks the value afterwards
 * (serializing it, checking it against a schema, storing it) recurses: 100,000 levels in a
 * 1 MiB body overflow the stack there, a 500 where the caller is at fault.
 */
export const DEPTH_MAX = 64;

/** The top-level field of `root` that nests deeper than DEPTH_MAX, or null; walked without recursion. */
function tooDeepAt(root: Record<string, unknown>): string | null {
  for (const [field, value] of Object.entries(root)) {
    const pending: [unknown, number][] = [[value, 1]];
    while (pending.length) {
      const [item, depth] = pending.pop()!;
      if (!item || typeof item !== "object") continue;
      if (depth > DEPTH_MAX) return field;
      for (const child of Object.values(item))
        if (child && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]);
const CLOSE = new Set([0x5d, 0x7d]);
const HEX = /^[0-9a-fA-F]{4}$/;

/**
 * Whether a JSON text (already parsed: it is valid) is certainly storable and nested within
 * DEPTH_MAX: what PostgreSQL cannot store can only come from a `\u` escape in JSON text (a raw
 * NUL is not valid JSON; bytes that are not UTF-8 decode as U+FFFD), so a text with no `\u0000`
 * and no `\uD800`–`\uDFFF` needs no walk. False means "walk the value", not "refuse it".
 */
export function plainJsonText(raw: Buffer): boolean {
  const escaped = (at: number) => {
    const hex = raw.toString("latin1", at + 2, at + 6);
    return HEX.test(hex) ? Number.parseInt(hex, 16) : -1;
  };
  for (let at = raw.indexOf("\\u"); at !== -1; at = raw.indexOf("\\u", at + 2)) {
    const code = escaped(at);
    if (code === 0 || (code >= 0xdc00 && code <= 0xdfff)) return false;
    if (code >= 0xd800 && code <= 0xdbff) {
      // A pair (an emoji as Python's json writes it) is storable: its low half is passed over.
      const low = raw[at + 6] === BACKSLASH && raw[at + 7] === 0x75 ? escaped(at + 6) : -1;
      if (low < 0xdc00 || low > 0xdfff) return false;
      at += 6;
    }
  }
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    // The body is depth 1; its fields' values are where DEPTH_MAX counts from.
    else if (OPEN.has(c) && ++depth - 1 > DEPTH_MAX) return false;
    else if (CLOSE.has(c)) depth--;
  }
  return true;
}
