import { describe, expect, it } from "vitest";
import { describeSyntaxError, errorOffset, parseSchemaText } from "./schemaText.ts";

describe("errorOffset", () => {
  it.each([
    ['{"a":1,}', 7],
    ['{"a" 1}', 5],
    ['{"a":', 5],
    ['{"a":tru}', 5],
    ["[1 2]", 3],
    ['{"a":"x\ny"}', 7],
    ['"x', 2],
    ["01", 1],
    ['{"a":[1,2,{"b":null}],"c":-1.5e3,"d":"\\u00e9\\n"}', -1],
    [" 12 ", -1],
  ])("%j goes wrong at %i", (text, offset) => {
    expect(errorOffset(text)).toBe(offset);
    expect(offset === -1).toBe(
      (() => {
        try {
          JSON.parse(text);
          return true;
        } catch {
          return false;
        }
      })(),
    );
  });
});

describe("parseSchemaText", () => {
  it("says where the JSON stops being JSON, by line and column", () => {
    const parsed = parseSchemaText('{ "type": "object",\n  "properties": }');
    expect(parsed).toMatchObject({ kind: "error", line: 2, column: 17 });
    if (parsed.kind === "error") expect(describeSyntaxError(parsed)).toMatch(/^Line 2, column 17: /);
  });

  it("takes nothing as no schema, and only an object as a schema", () => {
    expect(parseSchemaText("  \n")).toEqual({ kind: "empty" });
    expect(parseSchemaText('{"type":"object"}')).toEqual({ kind: "object", schema: { type: "object" } });
    expect(parseSchemaText("[]")).toMatchObject({ kind: "error", message: /JSON object/ });
  });
});
