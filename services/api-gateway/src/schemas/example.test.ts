import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { exampleFromSchema } from "./example.ts";

const ajv = new Ajv({ strict: false });
addFormats.default(ajv);

describe("example payloads from JSON Schemas", () => {
  it.each([
    [
      "flat object",
      {
        type: "object",
        required: ["id", "amount"],
        properties: { id: { type: "string" }, amount: { type: "integer", minimum: 1 } },
      },
    ],
    [
      "formats and enums",
      {
        type: "object",
        properties: {
          at: { type: "string", format: "date-time" },
          email: { type: "string", format: "email" },
          site: { type: "string", format: "uri" },
          currency: { enum: ["eur", "usd"] },
          kind: { const: "invoice" },
        },
        required: ["at", "email", "site", "currency", "kind"],
      },
    ],
    [
      "nested arrays",
      {
        type: "object",
        properties: {
          lines: {
            type: "array",
            minItems: 2,
            items: { type: "object", properties: { qty: { type: "number", maximum: 10 } } },
          },
        },
      },
    ],
    [
      "refs",
      {
        type: "object",
        properties: { customer: { $ref: "#/$defs/customer" } },
        $defs: {
          customer: {
            type: "object",
            properties: { name: { type: "string", minLength: 12 } },
            required: ["name"],
          },
        },
      },
    ],
    [
      "unions",
      {
        type: "object",
        properties: {
          note: { type: ["string", "null"] },
          value: { oneOf: [{ type: "boolean" }, { type: "string" }] },
        },
      },
    ],
    [
      "allOf",
      {
        allOf: [
          { type: "object", properties: { a: { type: "string" } } },
          { type: "object", properties: { b: { type: "integer", exclusiveMinimum: 5 } } },
        ],
      },
    ],
  ])("makes a valid example for %s", (_name, schema) => {
    const example = exampleFromSchema(schema);
    const valid = ajv.validate(schema, example);
    expect(valid ? [] : ajv.errors, JSON.stringify(example)).toEqual([]);
  });

  it("prefers the schema's own examples and defaults", () => {
    expect(
      exampleFromSchema({
        type: "object",
        properties: { n: { type: "integer", examples: [7] }, s: { type: "string", default: "hi" } },
      }),
    ).toEqual({ n: 7, s: "hi" });
    expect(exampleFromSchema({ type: "object", examples: [{ whole: true }] })).toEqual({ whole: true });
  });

  it("stops at a self-reference instead of recursing forever", () => {
    const schema = {
      $ref: "#/$defs/node",
      $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } },
    };
    expect(JSON.stringify(exampleFromSchema(schema)).length).toBeLessThan(500);
  });
});
