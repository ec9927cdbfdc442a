import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, invalidRequest } from "../support/errors.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * The 400 rows of the error table in the API contract, against a real gateway on its own
 * database and queue prefix. Each case checks status, type, code and (where one applies)
 * param, and that the body leaks no stack trace or file path. The other rows are in
 * errors.test.ts.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe("400 invalid_request_error", () => {
  it("names a missing required parameter (JSON, form and empty bodies)", async () => {
    expectError(
      await gw.request("POST", "/v3/apps", { json: { uid: "no-name" } }),
      400,
      invalidRequest("parameter_missing", "name"),
    );
    expectError(
      await gw.request("POST", "/v3/apps", { form: { uid: "no-name" } }),
      400,
      invalidRequest("parameter_missing", "name"),
    );
    expectError(await gw.request("POST", "/v3/apps"), 400, invalidRequest("parameter_missing", "name"));
    expectError(
      await gw.request("POST", "/v3/events", { json: { app: "x", type: "y" } }),
      400,
      invalidRequest("parameter_missing", "data"),
    );
    // Nothing was created by any of them.
    expect((await gw.request("GET", "/v3/apps/no-name")).status).toBe(404);
  });

  it("names an unknown parameter", async () => {
    expectError(
      await gw.request("POST", "/v3/apps", { json: { name: "A", colour: "red" } }),
      400,
      invalidRequest("parameter_unknown", "colour"),
    );
    expectError(
      await gw.request("POST", "/v3/apps", { form: { name: "A", colour: "red" } }),
      400,
      invalidRequest("parameter_unknown", "colour"),
    );
    expectError(
      await gw.request("GET", "/v3/apps?colour=red"),
      400,
      invalidRequest("parameter_unknown", "colour"),
    );
  });

  it("names a parameter of the wrong type", async () => {
    expectError(
      await gw.request("POST", "/v3/apps", { json: { name: 42 } }),
      400,
      invalidRequest("parameter_invalid", "name"),
    );
    expectError(
      await gw.request("POST", "/v3/apps", { json: { name: { first: "A" } } }),
      400,
      invalidRequest("parameter_invalid", "name"),
    );
    const app = await gw.request("POST", "/v3/apps", { json: { name: "Typed" } });
    expect(app.status).toBe(201);
    expectError(
      await gw.request("POST", "/v3/endpoints", {
        json: { app: app.body.id, url: "https://example.com/hook", event_types: "user.created" },
      }),
      400,
      invalidRequest("parameter_invalid", "event_types"),
    );
    expectError(
      await gw.request("POST", "/v3/endpoints", {
        json: { app: app.body.id, url: "https://example.com/hook", disabled: "maybe" },
      }),
      400,
      invalidRequest("parameter_invalid", "disabled"),
    );
    expectError(
      await gw.request("POST", "/v3/events", { json: { app: app.body.id, type: "a.b", data: "text" } }),
      400,
      invalidRequest("parameter_invalid", "data"),
    );
  });

  it("rejects a body that is not valid JSON", async () => {
    for (const body of ['{"name": ', "{name: 'A'}", '{"name":"A"}}', "nul"]) {
      expectError(
        await gw.request("POST", "/v3/apps", { raw: { body, type: "application/json" } }),
        400,
        invalidRequest("invalid_json", null),
      );
    }
  });

  it("rejects a path that is not valid percent-encoding, on the API and the pages", async () => {
    for (const path of ["/v3/apps/%E0", "/v3/events/%E0%A4%A", "/portal/events/%E0%A4%A"]) {
      expectError(await gw.request("GET", path), 400, invalidRequest("invalid_path", null));
    }
  });

  it("rejects a JSON body that is not an object", async () => {
    for (const body of ['[{"name":"A"}]', "[]", '"A"', "42", "null", "true"]) {
      const res = await gw.request("POST", "/v3/apps", { raw: { body, type: "application/json" } });
      expectError(res, 400, invalidRequest("invalid_body", null));
    }
    const list = await gw.request("GET", "/v3/apps?limit=100");
    expect(list.body.data.map((a: { name: string }) => a.name)).not.toContain("A");
  });

  it("rejects every out-of-range or non-integer limit, never clamping it", async () => {
    for (const path of [
      "/v3/apps",
      "/v3/endpoints",
      "/v3/events",
      "/v3/event-types",
      "/v3/attempts",
      "/v3/api-keys",
    ]) {
      for (const limit of ["0", "101", "abc", "-1", "1.5", "1000000", "", "5&limit=6"]) {
        const res = await gw.request("GET", `${path}?limit=${limit}`);
        expectError(res, 400, invalidRequest("parameter_invalid", "limit"));
      }
    }
    // The bounds themselves are fine.
    for (const limit of ["1", "100"])
      expect((await gw.request("GET", `/v3/apps?limit=${limit}`)).status).toBe(200);
  });

  it("rejects starting_after and ending_before together", async () => {
    const a = await gw.request("POST", "/v3/apps", { json: { name: "Cursor A" } });
    const b = await gw.request("POST", "/v3/apps", { json: { name: "Cursor B" } });
    const res = await gw.request("GET", `/v3/apps?starting_after=${b.body.id}&ending_before=${a.body.id}`);
    expectError(res, 400, invalidRequest("parameter_invalid", "ending_before"));
    // A cursor that is not an id of the list names its parameter.
    expectError(
      await gw.request("GET", "/v3/apps?starting_after=evt_nope"),
      400,
      invalidRequest("parameter_invalid", "starting_after"),
    );
  });

  it("rejects an event type schema that is not a valid JSON Schema", async () => {
    const bad = [
      { type: "not-a-type" },
      { type: "object", properties: { amount: { minimum: "zero" } } },
      { type: "object", required: "amount" },
    ];
    for (const [i, schema] of bad.entries()) {
      expectError(
        await gw.request("POST", "/v3/event-types", { json: { name: `bad.schema_${i}`, schema } }),
        400,
        invalidRequest("invalid_schema", "schema"),
      );
      expectError(
        await gw.request("POST", "/v3/event-types", { form: { name: `bad.schema_${i}`, schema } }),
        400,
        invalidRequest("invalid_schema", "schema"),
      );
      expect((await gw.request("GET", `/v3/event-types/bad.schema_${i}`)).status).toBe(404);
    }
    // The same check applies when a schema is set later.
    expect((await gw.request("POST", "/v3/event-types", { json: { name: "good.schema" } })).status).toBe(201);
    expectError(
      await gw.request("POST", "/v3/event-types/good.schema", { json: { schema: bad[0] } }),
      400,
      invalidRequest("invalid_schema", "schema"),
    );
    expect((await gw.request("GET", "/v3/event-types/good.schema")).body.schema).toBeNull();
  });

  it("names a JSON-valued form field that is not JSON", async () => {
    const app = await gw.request("POST", "/v3/apps", { json: { name: "Form JSON" } });
    const type = await gw.request("POST", "/v3/event-types", { json: { name: "form.checked" } });
    expect(type.status).toBe(201);
    const form = `app=${app.body.id}&type=form.checked&data=not-json`;
    expectError(
      await gw.request("POST", "/v3/events", {
        raw: { body: form, type: "application/x-www-form-urlencoded" },
      }),
      400,
      invalidRequest("parameter_invalid", "data"),
    );
    expectError(
      await gw.request("POST", "/v3/event-types", {
        raw: { body: "name=form.schema&schema={not json", type: "application/x-www-form-urlencoded" },
      }),
      400,
      invalidRequest("parameter_invalid", "schema"),
    );
    const events = await gw.request("GET", `/v3/events?app=${app.body.id}`);
    expect(events.body.data).toEqual([]);
  });
});
