import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectList, expectMatches } from "../support/openapi.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const schema = {
  type: "object",
  required: ["invoice_id", "amount"],
  properties: { invoice_id: { type: "string" }, amount: { type: "integer", minimum: 0 } },
};

describe.each(["json", "form"] as const)("event types with %s bodies", (mode) => {
  const send = (method: string, path: string, values: Record<string, unknown>) =>
    gw.request(method, path, mode === "json" ? { json: values } : { form: values });

  it("creates with a schema, retrieves, updates, archives and unarchives", async () => {
    const name = `invoice.paid_${mode}`;
    const created = await send("POST", "/v3/event-types", {
      name,
      description: "An invoice was paid",
      schema,
    });
    expect(created.status).toBe(201);
    expectMatches(created.body, "EventType");
    expect(created.body).toMatchObject({
      object: "event_type",
      name,
      description: "An invoice was paid",
      schema,
      archived: false,
    });
    // The example payload made from the schema is one the schema accepts.
    expect(created.body.example).toEqual({ invoice_id: "string", amount: 0 });
    await gw.request("POST", "/v3/apps", { json: { uid: `example-${mode}`, name: "Example" } });
    const sent = await gw.request("POST", "/v3/events", {
      json: { app: `example-${mode}`, type: name, data: created.body.example },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);

    expect((await gw.request("GET", `/v3/event-types/${name}`)).body).toEqual(created.body);

    const updated = await send("POST", `/v3/event-types/${name}`, { description: "Paid in full" });
    expect(updated.body).toMatchObject({ description: "Paid in full", schema });

    const archived = await send("POST", `/v3/event-types/${name}/archive`, {});
    expect(archived.body.archived).toBe(true);
    const listed = await gw.request("GET", "/v3/event-types");
    expectList(listed.body, "EventType");
    expect(listed.body.data.map((t: { name: string }) => t.name)).not.toContain(name);
    const all = await gw.request("GET", "/v3/event-types?include_archived=true");
    expect(all.body.data.map((t: { name: string }) => t.name)).toContain(name);

    const unarchived = await send("POST", `/v3/event-types/${name}/unarchive`, {});
    expect(unarchived.body.archived).toBe(false);
  });

  it("removes a schema when it is updated to null", async () => {
    const name = `schema.dropped_${mode}`;
    await send("POST", "/v3/event-types", { name, description: "d", schema });
    const res =
      mode === "json"
        ? await gw.request("POST", `/v3/event-types/${name}`, { json: { schema: null } })
        : await gw.request("POST", `/v3/event-types/${name}`, {
            raw: { type: "application/x-www-form-urlencoded", body: "schema=null" },
          });
    expect(res.status).toBe(200);
    expect(res.body.schema).toBeNull();
  });
});

describe("event type names", () => {
  const create = (name: string) =>
    gw.request("POST", "/v3/event-types", { form: { name, description: "x" } });

  it("accepts 64 characters of a-z 0-9 . _ and refuses 65", async () => {
    const ok = `a.${"b".repeat(62)}`;
    expect(ok).toHaveLength(64);
    expect((await create(ok)).status).toBe(201);
    const long = await create(`a.${"c".repeat(63)}`);
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ param: "name", code: "parameter_invalid" });
    expect(long.body.error.message).toContain("64");
  });

  it.each([
    ["uppercase", "Invoice.paid", "uppercase"],
    ["dash", "invoice-paid", "'-'"],
    ["space", "invoice paid", "space"],
    ["slash", "invoice/paid", "'/'"],
    ["empty", "", "empty"],
  ])("refuses a name with %s, naming the rule", async (_what, name, inMessage) => {
    const res = await create(name);
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("name");
    expect(res.body.error.message).toContain(inMessage);
  });

  it("accepts digits, dots and underscores", async () => {
    expect((await create("user_2.signed_up")).status).toBe(201);
  });

  it("keeps names permanent: taken even when archived, never renamed", async () => {
    expect((await create("order.shipped")).status).toBe(201);
    await gw.request("DELETE", "/v3/event-types/order.shipped");
    const again = await create("order.shipped");
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "resource_exists", param: "name" });
    const rename = await gw.request("POST", "/v3/event-types/order.shipped", {
      json: { name: "order.sent" },
    });
    expect(rename.status).toBe(400);
    expect(rename.body.error.param).toBe("name");
    expect((await gw.request("GET", "/v3/event-types/order.shipped")).body.archived).toBe(true);
  });
});

describe("event type schemas", () => {
  it.each([
    ["an unknown type keyword", { type: "banana" }],
    ["a non-object schema", [1, 2]],
    ["a bad required list", { type: "object", required: "amount" }],
    ["an unresolvable $ref", { $ref: "#/definitions/missing" }],
  ])("refuses %s with invalid_schema", async (_what, bad) => {
    const res = await gw.request("POST", "/v3/event-types", { json: { name: "bad.schema", schema: bad } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_schema", param: "schema" });
  });

  it("refuses an invalid schema on update too, keeping the old one", async () => {
    await gw.request("POST", "/v3/event-types", { json: { name: "keeps.schema", schema } });
    for (const bad of [{ type: 12 }, 0, "", false]) {
      const res = await gw.request("POST", "/v3/event-types/keeps.schema", { json: { schema: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_schema", param: "schema" });
    }
    expect((await gw.request("GET", "/v3/event-types/keeps.schema")).body.schema).toEqual(schema);
  });

  it("pages through event types by name", async () => {
    for (let i = 0; i < 5; i++) await gw.request("POST", "/v3/event-types", { json: { name: `page.t${i}` } });
    const first = await gw.request("GET", "/v3/event-types?limit=2");
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    const next = await gw.request("GET", `/v3/event-types?limit=2&starting_after=${first.body.data[1].name}`);
    expect(next.body.data.map((t: { name: string }) => t.name)).not.toContain(first.body.data[0].name);
    const back = await gw.request("GET", `/v3/event-types?limit=2&ending_before=${next.body.data[0].name}`);
    expect(back.body.data).toEqual(first.body.data);
  });
});
