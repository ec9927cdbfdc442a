import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, invalidRequest } from "../support/errors.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * Text PostgreSQL cannot store (a NUL, an unpaired surrogate) gets a 400 that names the field,
 * wherever it is: a name, a description, a header, deep in an event's data or a schema, a key,
 * a path parameter or the query. Never a 500, and nothing is stored.
 */
let gw: TestGateway;
let endpointId: string;
beforeAll(async () => {
  gw = await startGateway();
  expect((await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).status).toBe(201);
  expect((await gw.request("POST", "/v3/event-types", { json: { name: "order.paid" } })).status).toBe(201);
  const ep = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: "https://example.com/h" },
  });
  endpointId = ep.body.id;
});
afterAll(() => gw.close());

const NUL = "\u0000";
/** A lone high surrogate, as JSON can carry it (`"\ud800"`) and jsonb refuses it. */
const LONE = "\ud800";

describe("text that cannot be stored", () => {
  it.each([
    ["an app name", "POST", "/v3/apps", { name: `Acme${NUL}` }, "name"],
    ["an app name, form-encoded", "POST", "/v3/apps", { form: { name: `A${NUL}` } }, "name"],
    [
      "an event type description",
      "POST",
      "/v3/event-types",
      { name: "a.b", description: `x${NUL}` },
      "description",
    ],
    [
      "a schema, deep inside",
      "POST",
      "/v3/event-types",
      { name: "a.c", schema: { type: "object", properties: { n: { description: `n${NUL}` } } } },
      "schema[properties][n][description]",
    ],
    [
      "event data, deep inside",
      "POST",
      "/v3/events",
      { app: "acme", type: "order.paid", data: { items: [{ note: `a${NUL}b` }] } },
      "data[items][0][note]",
    ],
    [
      "a key of event data",
      "POST",
      "/v3/events",
      { app: "acme", type: "order.paid", data: { [`k${NUL}`]: 1 } },
      `data[k${NUL}]`,
    ],
    [
      "an unpaired surrogate in event data",
      "POST",
      "/v3/events",
      { app: "acme", type: "order.paid", data: { s: LONE } },
      "data[s]",
    ],
    [
      "an endpoint header value",
      "POST",
      "/v3/endpoints",
      { app: "acme", url: "https://example.com/h", headers: { "X-Tenant": `a${NUL}` } },
      "headers[X-Tenant]",
    ],
  ])("%s gets a 400 naming it", async (_what, method, path, body, param) => {
    const options = "form" in body ? { form: body.form as Record<string, unknown> } : { json: body };
    const res = await gw.request(method, path, options);
    expectError(res, 400, invalidRequest("parameter_invalid", param));
    expect(res.body.error.message).toContain("cannot be stored");
  });

  it("in event data sent as a form's JSON string, names data", async () => {
    const res = await gw.request("POST", "/v3/events", {
      raw: {
        type: "application/x-www-form-urlencoded",
        body: new URLSearchParams({
          app: "acme",
          type: "order.paid",
          data: '{"note":"a\\u0000b"}',
        }).toString(),
      },
    });
    expectError(res, 400, invalidRequest("parameter_invalid", "data[note]"));
  });

  it("in an update, a path parameter or the query, names it too", async () => {
    expectError(
      await gw.request("POST", `/v3/endpoints/${endpointId}`, { json: { description: `d${NUL}` } }),
      400,
      invalidRequest("parameter_invalid", "description"),
    );
    expectError(await gw.request("GET", "/v3/apps/a%00b"), 400, invalidRequest("parameter_invalid", "app"));
    expectError(
      await gw.request("GET", "/v3/events?app=a%00b"),
      400,
      invalidRequest("parameter_invalid", "app"),
    );
  });

  it("stores nothing, and the same request without it succeeds", async () => {
    const events = await gw.request("GET", "/v3/events?app=acme");
    expect(events.body.data).toEqual([]);
    const ok = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "order.paid", data: { note: "a\u00e9b \u{1F600}" } },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toEqual({ note: "a\u00e9b \u{1F600}" });
  });
});

describe("a body nested deeper than the gateway walks", () => {
  const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

  it.each([
    [
      "event data, 100,000 levels in 1 MiB",
      "/v3/events",
      (deep: string) => `{"app":"acme","type":"order.paid","data":${deep}}`,
      100_000,
      "data",
    ],
    [
      "event data, one level past the limit",
      "/v3/events",
      (deep: string) => `{"app":"acme","type":"order.paid","data":${deep}}`,
      65,
      "data",
    ],
    [
      "a schema",
      "/v3/event-types",
      (deep: string) => `{"name":"deep.schema","schema":${deep}}`,
      10_000,
      "schema",
    ],
  ])("is a 400 naming the field: %s", async (_what, path, body, levels, param) => {
    const res = await gw.request("POST", path, {
      raw: { body: body(nested(levels)), type: "application/json" },
    });
    expectError(res, 400, invalidRequest("parameter_invalid", param));
    expect(res.body.error.message).toContain("nested more than 64 levels");
  });

  it("takes 64 levels", async () => {
    const body = `{"app":"acme","type":"order.paid","data":${nested(63)}}`;
    const res = await gw.request("POST", "/v3/events", { raw: { body, type: "application/json" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

describe("a body in another Unicode encoding", () => {
  it("is checked as its text, not its bytes: a NUL or a lone surrogate in UTF-16 is a 400 too", async () => {
    for (const [text, what] of [
      [`{"app":"acme","type":"order.paid","data":{"x":"\\u0000"}}`, "a NUL"],
      [`{"app":"acme","type":"order.paid","data":{"x":"\\ud800"}}`, "a lone surrogate"],
    ] as const) {
      const res = await gw.request("POST", "/v3/events", {
        raw: { body: Buffer.from(`\ufeff${text}`, "utf16le"), type: "application/json; charset=utf-16le" },
      });
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.param).toMatch(/^data/);
    }
  });
});
