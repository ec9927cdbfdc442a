import { describe, expect, it } from "vitest";
import {
  byteLength,
  lineInMessage,
  lineNumbers,
  lineRange,
  STARTER_TRANSFORMATION,
  transformationBody,
} from "./transformationText.ts";

describe("transformationBody", () => {
  const code = "function handler(w) { return w; }";

  it("sends the code only when it differs from what is saved", () => {
    expect(transformationBody(code, null)).toEqual({ transformation: code });
    expect(transformationBody(code, { transformation: code })).toEqual({});
    expect(transformationBody(`${code}\n`, { transformation: code })).toEqual({
      transformation: `${code}\n`,
    });
  });

  it("removes a saved one with null when the box is emptied, and sends nothing for an empty new one", () => {
    expect(transformationBody("  \n", { transformation: code })).toEqual({ transformation: null });
    expect(transformationBody("", null)).toEqual({});
    expect(transformationBody("", { transformation: null })).toEqual({});
  });
});

describe("lines", () => {
  it("reads the line the API's message names at its end", () => {
    expect(lineInMessage("SyntaxError: unexpected token in expression: ';' (line 2)")).toBe(2);
    expect(lineInMessage("the transformation ran past its 50 ms budget (line 14)")).toBe(14);
    expect(
      lineInMessage(
        "the transformation ran past its 50 ms budget inside `f`, called from line 9 (at line 2 or later in it)",
      ),
    ).toBe(2);
    expect(lineInMessage('the transformation set `method` to "GET"')).toBeNull();
    expect(lineInMessage("(line 3) is not at the end")).toBeNull();
  });

  it("finds where a line starts and ends, the last one for a line past the end", () => {
    const text = "ab\ncde\n\nf";
    expect(lineRange(text, 1)).toEqual({ start: 0, end: 2 });
    expect(lineRange(text, 2)).toEqual({ start: 3, end: 6 });
    expect(text.slice(3, 6)).toBe("cde");
    expect(lineRange(text, 3)).toEqual({ start: 7, end: 7 });
    expect(lineRange(text, 9)).toEqual({ start: 8, end: 9 });
    expect(lineRange(text, 0)).toEqual({ start: 0, end: 2 });
  });

  it("numbers every line, an empty box's one included", () => {
    expect(lineNumbers("")).toEqual([1]);
    expect(lineNumbers("a\nb\n")).toEqual([1, 2, 3]);
  });
});

describe("the starter", () => {
  it("defines handler and returns the webhook unchanged, its other lines comments", () => {
    const code = STARTER_TRANSFORMATION.split("\n").filter((l) => l.trim() && !l.trim().startsWith("//"));
    expect(code).toEqual(["function handler(webhook) {", "  return webhook;", "}"]);
  });

  it("counts bytes as UTF-8, as the API's limit does", () => {
    expect(byteLength("é")).toBe(2);
    expect(byteLength("abc")).toBe(3);
  });
});
