import { describe, expect, it } from "vitest";
import { check, violations } from "./compile.ts";

const many = <T>(count: number, make: (i: number) => T) => Array.from({ length: count }, (_, i) => make(i));
const twice = (ref: string) => ({ allOf: [{ $ref: ref }, { $ref: ref }] });
const problemsOf = (schema: object) => {
  const checked = check(schema);
  return checked.ok ? [] : checked.problems.map((p) => p.message);
};

describe("the expansion budget, down the data", () => {
  it.each([
    ["through a property", { $defs: { n: { properties: { a: twice("#/$defs/n") } } }, $ref: "#/$defs/n" }],
    [
      "through additionalProperties, beside a pattern no key need match",
      {
        $defs: { r: { patternProperties: { "^$": {} }, additionalProperties: twice("#/$defs/r") } },
        $ref: "#/$defs/r",
      },
    ],
    ["through a $ref to a place no keyword names", { $ref: "#/x", x: { properties: { a: twice("#/x") } } }],
    [
      "through a tuple, read as draft-07 reads it (prefixItems does nothing)",
      {
        $defs: {
          P: { items: [{ $ref: "#/$defs/D" }] },
          Q: { prefixItems: [{}], items: [{ $ref: "#/$defs/D" }] },
          D: { allOf: [{ $ref: "#/$defs/P" }, { $ref: "#/$defs/Q" }] },
        },
        $ref: "#/$defs/D",
      },
    ],
  ])("refuses subschemas that double at each level %s", (_how, schema) => {
    expect(problemsOf(schema)).toEqual([expect.stringMatching(/in the data.*\(schema expansion\)$/)]);
  });

  it("refuses a schema too intricate to count, before counting it all", () => {
    const schema = {
      $defs: { X: { allOf: many(900, () => ({})) } },
      allOf: [
        { properties: Object.fromEntries(many(3000, (i) => [`p${i}`, {}])) },
        ...many(60, () => ({ additionalProperties: { $ref: "#/$defs/X" } })),
      ],
    };
    expect(problemsOf(schema)).toEqual([expect.stringContaining("to count to bound its cost")]);
  });

  it.each([
    [
      "a tree through #",
      { type: "object", properties: { name: { type: "string" }, children: { items: { $ref: "#" } } } },
    ],
    [
      "a linked list with items",
      {
        $defs: {
          node: { properties: { next: { $ref: "#/$defs/node" }, all: { items: { $ref: "#/$defs/node" } } } },
        },
        $ref: "#/$defs/node",
      },
    ],
    [
      "named and other properties, both recursive",
      { properties: { a: { $ref: "#" } }, additionalProperties: { $ref: "#" } },
    ],
    [
      "a tuple, then more of itself",
      { items: [{ type: "string" }, { $ref: "#" }], additionalItems: { $ref: "#" } },
    ],
    [
      "a draft-07 anchor",
      {
        definitions: { a: { $id: "#addr", properties: { street: { type: "string" } } } },
        properties: { home: { $ref: "#addr" } },
      },
    ],
    [
      "a reference relative to the root's $id",
      {
        $id: "https://example.com/order.json",
        definitions: { a: { type: "string" } },
        properties: { x: { $ref: "order.json#/definitions/a" } },
      },
    ],
  ])("accepts %s, and checks data against it", (_what, schema) => {
    const checked = check(schema);
    expect(checked.ok ? [] : checked.problems).toEqual([]);
  });

  it("checks a tree through # at every level", () => {
    const checked = check({ properties: { name: { type: "string" }, children: { items: { $ref: "#" } } } });
    if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
    const data = { name: "a", children: [{ name: "b", children: [{ name: 3 }] }] };
    expect(violations(checked.validate, data)).toEqual([
      { path: "/children/0/children/0/name", message: "must be string" },
    ]);
  });
});
