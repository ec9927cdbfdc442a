import { describe, expect, it } from "vitest";
import { storable, storableText, unstorableAt } from "./text.ts";

describe("text PostgreSQL cannot store", () => {
  it.each([
    ["a NUL", "ok\u0000\u0000", "ok\uFFFD\uFFFD"],
    ["a lone high surrogate", "a\ud800b", "a\uFFFDb"],
    ["a lone low surrogate", "a\udc00b", "a\uFFFDb"],
    ["a surrogate pair, kept", "a\u{1F600}b", "a\u{1F600}b"],
    ["plain text, kept", "caf\u00e9", "caf\u00e9"],
  ])("%s", (_what, input, stored) => {
    expect(storableText(input)).toBe(stored);
  });

  it("is replaced in every key and string of a JSON value, other values kept", () => {
    expect(storable({ "k\u0000": ["a\u0000", 1, null, { b: "\ud800" }], n: 2 })).toEqual({
      "k\uFFFD": ["a\uFFFD", 1, null, { b: "\uFFFD" }],
      n: 2,
    });
  });

  it("is found with its path, in keys and values, or not at all", () => {
    expect(unstorableAt({ a: { b: [1, "x\u0000"] } })).toEqual(["a", "b", "1"]);
    expect(unstorableAt({ a: { "k\u0000": 1 } })).toEqual(["a", "k\u0000"]);
    expect(unstorableAt({ a: "\u{1F600}", b: [true, 1.5, null] })).toBeNull();
    expect(unstorableAt("\ud800")).toEqual([]);
  });
});
