/** What the schema box holds: nothing (no schema), a JSON object, or a problem to show where it is. */
export type ParsedSchema =
  | { kind: "empty" }
  | { kind: "object"; schema: Record<string, unknown> }
  | { kind: "error"; message: string; line?: number; column?: number };

export function parseSchemaText(text: string): ParsedSchema {
  if (!text.trim()) return { kind: "empty" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { kind: "error", ...syntaxError(text, (err as Error).message) };
  }
  if (!value || typeof value !== "object" || Array.isArray(value))
    return { kind: "error", message: 'A schema is a JSON object, such as {"type": "object"}.' };
  return { kind: "object", schema: value as Record<string, unknown> };
}

export function describeSyntaxError(p: { message: string; line?: number; column?: number }): string {
  return p.line ? `Line ${p.line}, column ${p.column}: ${p.message}` : p.message;
}

/**
 * The parser's message, tidied, with where the text stops being JSON. Engines do not all say
 * where ("Unexpected token '}', …" has no position in V8), so the place is found by a scan.
 */
export function syntaxError(text: string, raw: string): { message: string; line?: number; column?: number } {
  const message = raw
    .replace(/^(Unexpected token .+?), ".*" is not valid JSON$/s, "$1")
    .replace(/\s*\(line \d+ column \d+\)/, "")
    .replace(/\s*in JSON at position \d+/, "")
    .replace(/^JSON\.parse: /, "");
  const offset = errorOffset(text);
  if (offset < 0) return { message };
  const before = text.slice(0, offset).split("\n");
  return { message, line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;

/** Where JSON text first goes wrong (the offset of the offending character), or -1 when it is JSON. */
export function errorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++;
  };
  const sticky = (re: RegExp) => {
    re.lastIndex = i;
    if (!re.test(text)) fail();
    i = re.lastIndex;
  };
  const string = () => {
    i++;
    while (i < text.length) {
      const c = text[i] as string;
      if (c === '"') {
        i++;
        return;
      }
      if (c < " ") fail();
      if (c !== "\\") {
        i++;
        continue;
      }
      i++;
      if (text[i] === "u") {
        i++;
        sticky(HEX4);
      } else if ('"\\/bfnrt'.includes(text[i] ?? "x")) i++;
      else fail();
    }
    fail();
  };
  const items = (close: string, item: () => void) => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === close) {
        i++;
        return;
      } else fail();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{")
      items("}", () => {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
      });
    else if (c === "[") items("]", value);
    else if (c === '"') string();
    else if (c === "t" || c === "f" || c === "n") {
      const word = c === "t" ? "true" : c === "f" ? "false" : "null";
      if (!text.startsWith(word, i)) fail();
      i += word.length;
    } else sticky(NUMBER);
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return -1;
  } catch (at) {
    if (typeof at === "number") return at;
    throw at;
  }
}
