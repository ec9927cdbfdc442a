import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { check, sharedSchemaCount } from "../../services/api-gateway/src/schemas/compile.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
});
afterAll(() => gw.close());

const validate = (schema: unknown, mode: "json" | "form" = "json") =>
  gw.request(
    "POST",
    "/v3/json-schema/validate",
    mode === "json" ? { json: { schema } } : { form: { schema } },
  );

const invoice = {
  type: "object",
  required: ["invoice_id", "amount"],
  properties: {
    invoice_id: { type: "string", examples: ["in_1001"] },
    amount: { type: "integer", minimum: 1 },
    paid_at: { type: "string", format: "date-time" },
  },
};

describe("validating a JSON Schema", () => {
  it.each(["json", "form"] as const)(
    "answers a valid schema (%s body) with the example an event type would show",
    async (mode) => {
      const res = await validate(invoice, mode);
      expect(res.status).toBe(200);
      expectMatches(res.body, "SchemaValidation");
      expect(res.body).toEqual({
        object: "schema_validation",
        valid: true,
        errors: [],
        example: { invoice_id: "in_1001", amount: 1, paid_at: "2026-11-21T10:00:00.000Z" },
      });
    },
  );

  it("lists each problem of an invalid schema where it is, with no example", async () => {
    const res = await validate({
      type: "object",
      required: "amount",
      properties: { amount: { type: "strin" }, note: { type: "string", minLength: "1" } },
    });
    expect(res.status).toBe(200);
    expectMatches(res.body, "SchemaValidation");
    expect(res.body.valid).toBe(false);
    expect(res.body.example).toBeNull();
    const byPath = Object.fromEntries(
      (res.body.errors as { path: string; message: string }[]).map((e) => [e.path, e.message]),
    );
    expect(Object.keys(byPath).sort()).toEqual([
      "/properties/amount/type",
      "/properties/note/minLength",
      "/required",
    ]);
    expect(byPath["/properties/amount/type"]).toContain('"string"');
    expect(byPath["/required"]).toBe("must be array");
  });

  it.each([
    ["a non-object", [1, 2]],
    ["null", null],
    ["an unresolvable $ref", { $ref: "#/definitions/missing" }],
    ["a bad pattern", { type: "string", pattern: "(" }],
  ])("refuses %s at the root", async (_what, schema) => {
    const res = await validate(schema);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, example: null });
    expect(res.body.errors).toEqual([{ path: "/", message: expect.any(String) }]);
  });

  it("agrees with event type creation, which names the same problems", async () => {
    const bad = { type: "object", properties: { amount: { type: "strin" } } };
    expect((await validate(bad)).body.valid).toBe(false);
    const refused = await gw.request("POST", "/v3/event-types", { json: { name: "bad.type", schema: bad } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "invalid_schema", param: "schema" });
    expect(refused.body.error.details).toEqual((await validate(bad)).body.errors);

    expect((await validate(invoice)).body.valid).toBe(true);
    const created = await gw.request("POST", "/v3/event-types", {
      json: { name: "good.type", schema: invoice },
    });
    expect(created.status).toBe(201);
    expect(created.body.example).toEqual((await validate(invoice)).body.example);
  });

  it("checks a schema with an $id as often as asked, and types sharing an $id still take events", async () => {
    const withId = { ...invoice, $id: "https://example.com/invoice.json" };
    for (let i = 0; i < 3; i++) expect((await validate(withId)).body.valid).toBe(true);
    for (const name of ["id.one", "id.two"]) {
      expect((await gw.request("POST", "/v3/event-types", { json: { name, schema: withId } })).status).toBe(
        201,
      );
      const sent = await gw.request("POST", "/v3/events", {
        json: { app: "acme", type: name, data: { invoice_id: "in_1", amount: 5 } },
      });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    }
  });

  it("keeps nothing of the schemas it checked, the ones that failed to compile included", () => {
    // The checker the schema workers run, here in this process where its instance can be seen.
    check(invoice);
    const before = sharedSchemaCount();
    for (let i = 0; i < 40; i++) {
      expect(check({ $ref: `#/definitions/missing${i}` }).ok).toBe(false);
      expect(check({ type: "string", pattern: `(${i}` }).ok).toBe(false);
      const nested = { type: "object", properties: { a: { $id: `https://example.com/n${i}.json` } } };
      expect(check(nested).ok).toBe(true);
    }
    expect(sharedSchemaCount()).toBe(before);
  });

  it("keeps checking schemas after one that claims the meta-schema's $id", async () => {
    for (const $id of ["http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-07/schema#"])
      await validate({ $id, type: "object" });
    await gw.request("POST", "/v3/event-types", {
      json: { name: "meta.claim", schema: { $id: "http://json-schema.org/draft-07/schema", type: "object" } },
    });
    expect((await validate(invoice)).body).toMatchObject({ valid: true, errors: [] });
    const refused = await validate({ type: "strin" });
    expect(refused.status).toBe(200);
    expect(refused.body.valid).toBe(false);
    const created = await gw.request("POST", "/v3/event-types", {
      json: { name: "after.claim", schema: invoice },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it("says so of a $schema it does not know, as a problem of the schema", async () => {
    const res = await validate({ $schema: "https://example.com/unknown-meta", type: "object" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, errors: [{ path: "/", message: expect.any(String) }] });
  });

  it("needs a schema", async () => {
    const res = await gw.request("POST", "/v3/json-schema/validate", { json: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "parameter_missing", param: "schema" });
    const notJson = await gw.request("POST", "/v3/json-schema/validate", {
      raw: { body: "schema={", type: "application/x-www-form-urlencoded" },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.param).toBe("schema");
  });
});
