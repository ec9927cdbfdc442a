import { randomBytes } from "node:crypto";
import { newId } from "@herald/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Expected, expectError, invalidRequest, MIB } from "../support/errors.ts";
import { type Response, startGateway, type TestGateway, toForm } from "../support/gateway.ts";

/**
 * Every row of the error table in the API contract, against a real gateway on its own
 * database and queue prefix. Each case checks status, type, code and (where one applies)
 * param, and that the body leaks no stack trace or file path. The 400 rows are in
 * badRequests.test.ts.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe("401 authentication_error", () => {
  const unauthenticated: Expected = { type: "authentication_error", code: "unauthenticated", param: null };

  it("refuses a request without an Authorization header", async () => {
    expectError(await gw.request("GET", "/v3/apps", { key: null }), 401, unauthenticated);
    expectError(
      await gw.request("POST", "/v3/apps", { key: null, json: { name: "A" } }),
      401,
      unauthenticated,
    );
  });

  it("refuses a malformed Authorization header", async () => {
    for (const authorization of [
      "Token abc",
      "Bearer",
      "Bearer ",
      "Basic dXNlcjpwYXNz",
      `Bearer ${gw.key} extra`,
      gw.key,
    ]) {
      const res = await gw.request("GET", "/v3/apps", { key: null, headers: { authorization } });
      expectError(res, 401, unauthenticated);
    }
  });

  it("refuses an unknown key and a key of the wrong shape", async () => {
    const unknown = `hk_${randomBytes(32).toString("base64url")}`;
    expectError(await gw.request("GET", "/v3/apps", { key: unknown }), 401, unauthenticated);
    expectError(await gw.request("GET", "/v3/apps", { key: "not-a-key" }), 401, unauthenticated);
    expectError(await gw.request("GET", "/v3/apps", { key: `${gw.key}x` }), 401, unauthenticated);
  });

  it("refuses a revoked key", async () => {
    const made = await gw.request("POST", "/v3/api-keys", { json: { name: "to revoke" } });
    expect(made.status).toBe(201);
    expect((await gw.request("GET", "/v3/apps", { key: made.body.key })).status).toBe(200);

    const revoked = await gw.request("DELETE", `/v3/api-keys/${made.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ id: made.body.id, object: "api_key", deleted: true });

    const res = await gw.request("GET", "/v3/apps", { key: made.body.key });
    expectError(res, 401, unauthenticated);
    expect(res.body.error.message).toMatch(/revoked/i);
    expectError(
      await gw.request("POST", "/v3/apps", { key: made.body.key, json: { name: "A" } }),
      401,
      unauthenticated,
    );
    // The account's other key is untouched.
    expect((await gw.request("GET", "/v3/apps")).status).toBe(200);
  });

  it("answers 401 before looking at the id or the body", async () => {
    expectError(await gw.request("GET", `/v3/apps/${newId("app")}`, { key: null }), 401, unauthenticated);
    expectError(
      await gw.request("POST", "/v3/apps", { key: null, raw: { body: "{bad", type: "application/json" } }),
      401,
      unauthenticated,
    );
  });
});

describe("404 resource_missing", () => {
  const missing = invalidRequest("resource_missing");

  it("for an unknown app id or uid", async () => {
    const app = await gw.request("POST", "/v3/apps", { json: { name: "Gone", uid: "gone-app" } });
    expect((await gw.request("DELETE", `/v3/apps/${app.body.id}`)).status).toBe(200);
    for (const ref of [app.body.id, "gone-app", newId("app")]) {
      expectError(await gw.request("GET", `/v3/apps/${ref}`), 404, missing);
      expectError(await gw.request("POST", `/v3/apps/${ref}`, { json: { name: "B" } }), 404, missing);
      expectError(await gw.request("DELETE", `/v3/apps/${ref}`), 404, missing);
    }
    // An app named in a body field is reported under that field.
    expectError(
      await gw.request("POST", "/v3/endpoints", { json: { app: app.body.id, url: "https://example.com/h" } }),
      404,
      invalidRequest("resource_missing", "app"),
    );
  });

  it("for an unknown endpoint id", async () => {
    const app = await gw.request("POST", "/v3/apps", { json: { name: "Endpoints" } });
    const ep = await gw.request("POST", "/v3/endpoints", {
      json: { app: app.body.id, url: "https://example.com/h" },
    });
    expect(ep.status).toBe(201);
    expect((await gw.request("DELETE", `/v3/endpoints/${ep.body.id}`)).status).toBe(200);
    for (const id of [ep.body.id, newId("endpoint"), "ep_nope"]) {
      expectError(await gw.request("GET", `/v3/endpoints/${id}`), 404, missing);
      expectError(
        await gw.request("POST", `/v3/endpoints/${id}`, { json: { description: "x" } }),
        404,
        missing,
      );
      expectError(await gw.request("DELETE", `/v3/endpoints/${id}`), 404, missing);
      expectError(await gw.request("GET", `/v3/endpoints/${id}/secret`), 404, missing);
      expectError(await gw.request("POST", `/v3/endpoints/${id}/secret/rotate`), 404, missing);
      expectError(await gw.request("POST", `/v3/endpoints/${id}/replay`), 404, missing);
    }
  });

  it("for an unknown event id", async () => {
    for (const id of [newId("event"), "evt_nope", newId("app")]) {
      expectError(await gw.request("GET", `/v3/events/${id}`), 404, missing);
    }
  });

  it("for an unknown route, with its own code", async () => {
    const notRouted = invalidRequest("unrecognized_url", null);
    const res = await gw.request("GET", "/v3/nope");
    expectError(res, 404, notRouted);
    expect(res.body.error.message).toContain("/v3/nope");
    expectError(await gw.request("POST", "/v3/nope", { json: {} }), 404, notRouted);
    expectError(await gw.request("GET", "/v3/nope", { key: null }), 404, notRouted);
    expectError(await gw.request("DELETE", `/v3/events/${newId("event")}`), 404, notRouted);
  });
});

describe("409 conflicts", () => {
  it("refuses a duplicate app uid", async () => {
    expect((await gw.request("POST", "/v3/apps", { json: { uid: "dup-uid", name: "First" } })).status).toBe(
      201,
    );
    expectError(
      await gw.request("POST", "/v3/apps", { json: { uid: "dup-uid", name: "Second" } }),
      409,
      invalidRequest("resource_exists", "uid"),
    );
    // Renaming another app onto the taken uid is the same conflict.
    const other = await gw.request("POST", "/v3/apps", { json: { uid: "other-uid", name: "Other" } });
    expectError(
      await gw.request("POST", `/v3/apps/${other.body.id}`, { json: { uid: "dup-uid" } }),
      409,
      invalidRequest("resource_exists", "uid"),
    );
    expect((await gw.request("GET", "/v3/apps/dup-uid")).body.name).toBe("First");
  });

  it("refuses an event type name that is taken, archived ones included", async () => {
    expect((await gw.request("POST", "/v3/event-types", { json: { name: "user.created" } })).status).toBe(
      201,
    );
    expectError(
      await gw.request("POST", "/v3/event-types", { json: { name: "user.created" } }),
      409,
      invalidRequest("resource_exists", "name"),
    );

    expect((await gw.request("POST", "/v3/event-types", { json: { name: "user.deleted" } })).status).toBe(
      201,
    );
    expect((await gw.request("POST", "/v3/event-types/user.deleted/archive")).body.archived).toBe(true);
    expectError(
      await gw.request("POST", "/v3/event-types", { json: { name: "user.deleted", description: "again" } }),
      409,
      invalidRequest("resource_exists", "name"),
    );

    expect((await gw.request("POST", "/v3/event-types", { json: { name: "user.merged" } })).status).toBe(201);
    expect((await gw.request("DELETE", "/v3/event-types/user.merged")).body.archived).toBe(true);
    expectError(
      await gw.request("POST", "/v3/event-types", { form: { name: "user.merged" } }),
      409,
      invalidRequest("resource_exists", "name"),
    );
  });

  it("refuses an Idempotency-Key reused with another body", async () => {
    const key = `errors-${randomBytes(6).toString("hex")}`;
    const first = await gw.request("POST", "/v3/apps", {
      json: { name: "Idem" },
      headers: { "idempotency-key": key },
    });
    expect(first.status).toBe(201);
    expectError(
      await gw.request("POST", "/v3/apps", { json: { name: "Idem 2" }, headers: { "idempotency-key": key } }),
      409,
      invalidRequest("idempotency_conflict", "Idempotency-Key"),
    );
  });
});

describe("413 body too large", () => {
  it("refuses a JSON body over 1 MiB", async () => {
    const res = await gw.request("POST", "/v3/apps", { json: { name: "x".repeat(MIB + 16) } });
    expectError(res, 413, invalidRequest("body_too_large", null));
  });

  it("refuses a form body over 1 MiB", async () => {
    const body = toForm({ name: "x".repeat(MIB + 16) });
    expect(Buffer.byteLength(body)).toBeGreaterThan(MIB);
    const res = await gw.request("POST", "/v3/apps", {
      raw: { body, type: "application/x-www-form-urlencoded" },
    });
    expectError(res, 413, invalidRequest("body_too_large", null));
  });

  it("accepts a body just under the limit up to the parser (then validates it)", async () => {
    // Under 1 MiB the body is parsed; the name is then too long for the schema (a 400, not a 413).
    const res = await gw.request("POST", "/v3/apps", { json: { name: "x".repeat(MIB - 64) } });
    expectError(res, 400, invalidRequest("parameter_invalid", "name"));
  });
});

describe("415 unsupported content type", () => {
  it("refuses text/plain and application/xml bodies on a POST", async () => {
    const unsupported = invalidRequest("unsupported_media_type", null);
    expectError(
      await gw.request("POST", "/v3/apps", { raw: { body: "name=A", type: "text/plain" } }),
      415,
      unsupported,
    );
    expectError(
      await gw.request("POST", "/v3/apps", {
        raw: { body: "<app><name>A</name></app>", type: "application/xml" },
      }),
      415,
      unsupported,
    );
    expectError(
      await gw.request("POST", "/v3/event-types", {
        raw: { body: "--x\r\n", type: "multipart/form-data; boundary=x" },
      }),
      415,
      unsupported,
    );
    // JSON in a charset other than UTF-8 is not a supported content type either.
    expectError(
      await gw.request("POST", "/v3/apps", {
        raw: { body: '{"name":"A"}', type: "application/json; charset=iso-8859-1" },
      }),
      415,
      unsupported,
    );
    const list = await gw.request("GET", "/v3/apps?limit=100");
    expect(list.body.data.map((a: { name: string }) => a.name)).not.toContain("A");
  });
});

describe("422 schema_validation_failed", () => {
  it("lists each violation of the event type's schema, and stores nothing", async () => {
    const schema = {
      type: "object",
      required: ["amount", "currency"],
      properties: {
        amount: { type: "integer", minimum: 0 },
        currency: { type: "string" },
        note: { type: "string" },
      },
    };
    expect(
      (await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid", schema } })).status,
    ).toBe(201);
    const app = await gw.request("POST", "/v3/apps", { json: { name: "Schema" } });

    for (const send of [
      (values: Record<string, unknown>) => gw.request("POST", "/v3/events", { json: values }),
      (values: Record<string, unknown>) => gw.request("POST", "/v3/events", { form: values }),
    ]) {
      const res = await send({ app: app.body.id, type: "invoice.paid", data: { amount: -5, note: 7 } });
      expectError(res, 422, invalidRequest("schema_validation_failed"));
      const details = res.body.error.details as { path: string; message: string }[];
      expect(Array.isArray(details)).toBe(true);
      for (const d of details) {
        expect(typeof d.path).toBe("string");
        expect(typeof d.message).toBe("string");
        expect(d.message.length).toBeGreaterThan(0);
      }
      const byPath = Object.fromEntries(details.map((d) => [d.path, d.message]));
      expect(Object.keys(byPath).sort()).toEqual(["/amount", "/currency", "/note"]);
      expect(byPath["/amount"]).toMatch(/>= ?0/);
      expect(byPath["/currency"]).toMatch(/required/);
      expect(byPath["/note"]).toMatch(/string/);
    }

    const events = await gw.request("GET", `/v3/events?app=${app.body.id}`);
    expect(events.body.data).toEqual([]);
    // Matching data is accepted.
    const ok = await gw.request("POST", "/v3/events", {
      json: { app: app.body.id, type: "invoice.paid", data: { amount: 5, currency: "EUR" } },
    });
    expect(ok.status).toBe(201);
  });
});

describe("429 rate_limit_error", () => {
  let limited: TestGateway;
  beforeAll(async () => {
    limited = await startGateway({ RATE_LIMIT_PER_SECOND: "2" });
  });
  afterAll(() => limited.close());

  it("answers 429 with a numeric Retry-After once the account is over its rate", async () => {
    let res: Response | undefined;
    for (let i = 0; i < 100; i++) {
      res = await limited.request("GET", "/v3/apps");
      if (res.status !== 200) break;
    }
    expect(res).toBeDefined();
    expectError(res!, 429, { type: "rate_limit_error", code: "rate_limited", param: null });
    const retryAfter = res!.headers.get("retry-after");
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);

    // The limit is per account: another account still gets through.
    const other = await limited.newAccount("Other");
    expect((await limited.request("GET", "/v3/apps", { key: other })).status).toBe(200);
  });

  it("gives each portal session a bucket of its own, apart from its account's and other portals'", async () => {
    const portalGw = await startGateway({ RATE_LIMIT_PER_SECOND: "1000", PORTAL_RATE_LIMIT_PER_SECOND: "2" });
    try {
      await portalGw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
      const openPortal = async () => {
        const { token } = (await portalGw.request("POST", "/v3/apps/acme/portal-sessions", { json: {} }))
          .body;
        const res = await portalGw.request("POST", "/session", {
          key: null,
          headers: { "herald-page": "portal" },
          json: { token },
        });
        return {
          key: null,
          headers: { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "herald-page": "portal" },
        };
      };
      const [noisy, quiet] = [await openPortal(), await openPortal()];
      let res: Response | undefined;
      for (let i = 0; i < 50; i++) {
        res = await portalGw.request("GET", "/v3/apps/acme", noisy);
        if (res.status !== 200) break;
      }
      expectError(res!, 429, { type: "rate_limit_error", code: "rate_limited", param: null });
      // Neither the account's API calls nor another customer's portal paid for it.
      expect((await portalGw.request("GET", "/v3/apps/acme")).status).toBe(200);
      expect((await portalGw.request("GET", "/v3/apps/acme", quiet)).status).toBe(200);
    } finally {
      await portalGw.close();
    }
  });
});

describe("5xx api_error", () => {
  let broken: TestGateway;
  beforeAll(async () => {
    broken = await startGateway();
  });
  afterAll(() => broken.close());

  it("answers an opaque 500 without a stack trace or SQL when the database breaks", async () => {
    expect((await broken.request("POST", "/v3/apps", { json: { name: "Before" } })).status).toBe(201);
    const client = new pg.Client({ connectionString: broken.databaseUrl });
    await client.connect();
    try {
      await client.query("DROP TABLE apps CASCADE");
    } finally {
      await client.end();
    }

    for (const res of [
      await broken.request("GET", "/v3/apps"),
      await broken.request("POST", "/v3/apps", { json: { name: "After" } }),
      await broken.request("GET", "/v3/apps/some-uid"),
    ]) {
      expectError(res, 500, { type: "api_error", code: "internal_error", param: null });
      const text = JSON.stringify(res.body);
      expect(text).not.toMatch(
        /relation|does not exist|select|insert|from\s|"?apps"?\.|prisma|42P01|postgres/i,
      );
      expect(res.body.error.message).toBe("Something went wrong on our side. Please try again later.");
      expect(res.body.error).not.toHaveProperty("details");
    }
  });
});
