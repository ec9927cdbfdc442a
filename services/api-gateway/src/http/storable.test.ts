import { describe, expect, it } from "vitest";
import { checkStorable, DEPTH_MAX, plainJsonText } from "./storable.ts";

/**
 * The text's shortcut says "storable" only where walking the parsed value would: never for a
 * NUL, an unpaired surrogate or a body nested too deep, whatever the escapes around them.
 */
const nested = (levels: number) => {
  let value = "1";
  for (let i = 0; i < levels; i++) value = `[${value}]`;
  return `{"data":${value}}`;
};

describe("the storable check's shortcut on the JSON text", () => {
  it("passes plain text, escapes that are not NUL or surrogates, and the deepest nesting allowed", () => {
    for (const text of [
      '{"a":"x"}',
      '{"a":"\\u00e9\\n\\"[[[ {{{"}',
      '{"a":"\\ud83d\\ude00"}',
      nested(DEPTH_MAX),
    ])
      expect(plainJsonText(Buffer.from(text)), text).toBe(true);
  });

  it("sends anything that may be unstorable or too deep to the walk, which decides", () => {
    for (const text of [
      '{"a":"\\u0000"}',
      '{"a":"\\ud800"}',
      '{"a":"\\uDFFF x"}',
      '{"\\u0000":1}',
      // Storable, but the shortcut does not tell: an escaped backslash then "u0000".
      '{"a":"\\\\u0000"}',
      // Halves out of place: a high one not followed by a low one, a low one alone.
      '{"a":"\\ud83d x \\ude00"}',
      '{"a":"\\ude00\\ud83d"}',
      nested(DEPTH_MAX + 1),
    ])
      expect(plainJsonText(Buffer.from(text)), text).toBe(false);
  });

  it("agrees with the walk on every body: refused where it must be, passed where it may be", () => {
    const cases = [
      '{"a":"\\u0000"}',
      '{"a":"\\ud800"}',
      nested(DEPTH_MAX + 1),
      nested(DEPTH_MAX),
      '{"a":"\\\\u0000"}',
      '{"a":"\\ud83d\\ude00"}',
      '{"a":1}',
    ];
    for (const text of cases) {
      const raw = Buffer.from(text);
      const walked = () => checkStorable([JSON.parse(text)]);
      const shortcut = () => checkStorable([JSON.parse(text)], raw);
      let expected: unknown = null;
      try {
        walked();
      } catch (err) {
        expected = (err as { param?: string }).param ?? err;
      }
      let got: unknown = null;
      try {
        shortcut();
      } catch (err) {
        got = (err as { param?: string }).param ?? err;
      }
      expect(got, text).toEqual(expected);
    }
  });
});
