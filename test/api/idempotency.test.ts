import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RequestOptions, type Response, startGateway, type TestGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";

/**
 * `Idempotency-Key` on POST: the same key and the same request within 24 hours returns the
 * first response again and does nothing twice; the same key with another request is a 409.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const newKey = () => `idem-${randomBytes(8).toString("hex")}`;

function post(path: string, key: string, options: RequestOptions = {}): Promise<Response> {
  return gw.request("POST", path, { ...options, headers: { ...options.headers, "idempotency-key": key } });
}

function expectReplayOf(replay: Response, first: Response): void {
  expect(replay.status, JSON.stringify(replay.body)).toBe(first.status);
  expect(replay.body).toEqual(first.body);
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
}

async function count(path: string, options: RequestOptions = {}): Promise<number> {
  const res = await gw.request("GET", path, options);
  expect(res.status).toBe(200);
  expect(res.body.has_more).toBe(false);
  return res.body.data.length;
}

let app: { id: string; uid: string };
beforeAll(async () => {
  const res = await gw.request("POST", "/v3/apps", { json: { uid: "idem-app", name: "Idempotency" } });
  app = res.body;
  expect((await gw.request("POST", "/v3/event-types", { json: { name: "order.created" } })).status).toBe(201);
});

describe("the same key with the same body", () => {
  it("returns the first app again and creates it once", async () => {
    const key = newKey();
    const before = await count("/v3/apps?limit=100");
    const first = await post("/v3/apps", key, { json: { uid: "once", name: "Once" } });
    expect(first.status).toBe(201);
    expectMatches(first.body, "App");
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const second = await post("/v3/apps", key, { json: { uid: "once", name: "Once" } });
    expectReplayOf(second, first);
    expect(second.body.id).toBe(first.body.id);
    const third = await post("/v3/apps", key, { json: { uid: "once", name: "Once" } });
    expectReplayOf(third, first);

    expect(await count("/v3/apps?limit=100")).toBe(before + 1);
  });

  it("sends an event once", async () => {
    const key = newKey();
    const body = { app: app.id, type: "order.created", data: { order: 1, lines: [{ sku: "a", qty: 2 }] } };
    const first = await post("/v3/events", key, { json: body });
    expect(first.status).toBe(201);
    expectMatches(first.body, "Event");
    const second = await post("/v3/events", key, { json: body });
    expectReplayOf(second, first);

    const events = await gw.request("GET", `/v3/events?app=${app.id}&limit=100`);
    expect(events.body.data.filter((e: { data: { order?: number } }) => e.data.order === 1)).toHaveLength(1);
    expect(events.body.data.map((e: { id: string }) => e.id)).toContain(first.body.id);
  });

  it("creates an endpoint once, with one secret", async () => {
    const key = newKey();
    const body = { app: app.uid, url: "https://example.com/once", headers: { "X-Tenant": "t1" } };
    const before = await count(`/v3/endpoints?app=${app.id}&limit=100`);
    const first = await post("/v3/endpoints", key, { json: body });
    expect(first.status).toBe(201);
    expectReplayOf(await post("/v3/endpoints", key, { json: body }), first);
    expect(await count(`/v3/endpoints?app=${app.id}&limit=100`)).toBe(before + 1);
  });

  it("rotates a secret once: the replay returns the same new secret", async () => {
    const ep = await gw.request("POST", "/v3/endpoints", {
      json: { app: app.id, url: "https://example.com/rot" },
    });
    const original = (await gw.request("GET", `/v3/endpoints/${ep.body.id}/secret`)).body.secret;
    const key = newKey();
    const first = await post(`/v3/endpoints/${ep.body.id}/secret/rotate`, key);
    expect(first.status).toBe(200);
    expect(first.body.secret).not.toBe(original);
    expectReplayOf(await post(`/v3/endpoints/${ep.body.id}/secret/rotate`, key), first);
    expect((await gw.request("GET", `/v3/endpoints/${ep.body.id}/secret`)).body.secret).toBe(
      first.body.secret,
    );
  });

  it("treats a JSON body and a form body of the same meaning as the same request", async () => {
    const appKey = newKey();
    const json = await post("/v3/apps", appKey, { json: { name: "Either", uid: "either" } });
    expect(json.status).toBe(201);
    expectReplayOf(await post("/v3/apps", appKey, { form: { uid: "either", name: "Either" } }), json);

    // JSON-valued fields (data) and nested values, arrays and maps.
    await gw.request("POST", "/v3/event-types", { json: { name: "order.shipped" } });
    const eventKey = newKey();
    const data = { order: 7, carrier: { name: "DHL", tracking: ["a", "b"] }, gift: false, note: null };
    const event = await post("/v3/events", eventKey, { form: { app: app.id, type: "order.shipped", data } });
    expect(event.status).toBe(201);
    expectReplayOf(
      await post("/v3/events", eventKey, { json: { type: "order.shipped", data, app: app.id } }),
      event,
    );

    const endpointKey = newKey();
    const endpointBody = {
      app: app.id,
      url: "https://example.com/both",
      description: "both ways",
      event_types: ["order.created", "order.shipped"],
      headers: { "X-One": "1", "X-Two": "2" },
      disabled: false,
    };
    const endpoint = await post("/v3/endpoints", endpointKey, { json: endpointBody });
    expect(endpoint.status).toBe(201);
    expectReplayOf(await post("/v3/endpoints", endpointKey, { form: endpointBody }), endpoint);

    const events = await gw.request("GET", `/v3/events?app=${app.id}&type=order.shipped`);
    expect(events.body.data).toHaveLength(1);
    const endpoints = await gw.request("GET", `/v3/endpoints?app=${app.id}&limit=100`);
    expect(
      endpoints.body.data.filter((e: { url: string }) => e.url === "https://example.com/both"),
    ).toHaveLength(1);
  });
});

describe("concurrent requests with one key", () => {
  it("do the work once: one 201, the others a replay of it or a 409 in progress", async () => {
    const key = newKey();
    const body = { uid: "raced", name: "Raced" };
    const results = await Promise.all(Array.from({ length: 8 }, () => post("/v3/apps", key, { json: body })));
    const fresh = results.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(fresh).toHaveLength(1);
    for (const r of results) {
      if (r === fresh[0]) continue;
      if (r.status === 201) expectReplayOf(r, fresh[0]!);
      else {
        expect(r.status, JSON.stringify(r.body)).toBe(409);
        expect(r.body.error.code).toBe("idempotency_in_progress");
      }
    }
    const apps = await gw.request("GET", "/v3/apps?limit=100");
    expect(apps.body.data.filter((a: { uid: string }) => a.uid === "raced")).toHaveLength(1);
    expectReplayOf(await post("/v3/apps", key, { json: body }), fresh[0]!);
  });
});

describe("the same key with another request", () => {
  it("is a 409 idempotency_conflict and does nothing", async () => {
    const key = newKey();
    const first = await post("/v3/apps", key, { json: { uid: "first-body", name: "First" } });
    expect(first.status).toBe(201);

    for (const body of [
      { uid: "second-body", name: "First" },
      { uid: "first-body", name: "Second" },
      { name: "First" },
    ]) {
      const res = await post("/v3/apps", key, { json: body });
      expect(res.status, JSON.stringify(body)).toBe(409);
      expectMatches(res.body, "Error");
      expect(res.body.error).toMatchObject({
        type: "invalid_request_error",
        code: "idempotency_conflict",
        param: "Idempotency-Key",
      });
      expect(res.headers.get("idempotent-replayed")).toBeNull();
    }
    expect((await gw.request("GET", "/v3/apps/second-body")).status).toBe(404);
    expect((await gw.request("GET", "/v3/apps/first-body")).body.name).toBe("First");

    // The first response is still what the key returns.
    expectReplayOf(await post("/v3/apps", key, { json: { name: "First", uid: "first-body" } }), first);
  });

  it("is a 409 on another path, too", async () => {
    const key = newKey();
    expect((await post("/v3/event-types", key, { json: { name: "path.one" } })).status).toBe(201);
    const res = await post("/v3/apps", key, { json: { name: "path.one" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("idempotency_conflict");
  });
});

describe("keys of two accounts", () => {
  it("do not collide: each account gets its own result", async () => {
    const other = await gw.newAccount("Other");
    const key = newKey();
    const body = { uid: "same-everything", name: "Same" };
    const mine = await post("/v3/apps", key, { json: body });
    const theirs = await post("/v3/apps", key, { json: body, key: other });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);

    // A different body under the same key is no conflict in the other account either.
    const otherKey = newKey();
    expect((await post("/v3/apps", otherKey, { json: { name: "Mine" } })).status).toBe(201);
    const different = await post("/v3/apps", otherKey, { json: { name: "Theirs" }, key: other });
    expect(different.status).toBe(201);
    expect(different.body.name).toBe("Theirs");

    // Each account's replay returns its own first response.
    expectReplayOf(await post("/v3/apps", key, { json: body, key: other }), theirs);
    expectReplayOf(await post("/v3/apps", key, { json: body }), mine);
    expect((await gw.request("GET", "/v3/apps/same-everything", { key: other })).body.id).toBe(
      theirs.body.id,
    );
  });
});

describe("a remembered 4xx", () => {
  it("replays a 422 schema_validation_failed even after the schema changes", async () => {
    const schema = { type: "object", required: ["amount"], properties: { amount: { type: "integer" } } };
    expect(
      (await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid", schema } })).status,
    ).toBe(201);
    const key = newKey();
    const body = { app: app.id, type: "invoice.paid", data: { amount: "ten" } };
    const first = await post("/v3/events", key, { json: body });
    expect(first.status).toBe(422);
    expect(first.body.error.code).toBe("schema_validation_failed");

    // Relax the schema: the same data would now be accepted...
    const relaxed = await gw.request("POST", "/v3/event-types/invoice.paid", { json: { schema: null } });
    expect(relaxed.body.schema).toBeNull();
    // ...but the key answers with what it answered first, and stores nothing.
    const again = await post("/v3/events", key, { json: body });
    expectReplayOf(again, first);
    expect(again.body.error.details).toEqual(first.body.error.details);
    expect((await gw.request("GET", `/v3/events?app=${app.id}&type=invoice.paid`)).body.data).toEqual([]);

    // A new key runs the request again.
    expect((await post("/v3/events", newKey(), { json: body })).status).toBe(201);
  });

  it("replays a 400 from the handler's validation (unknown event type) after the type is created", async () => {
    const key = newKey();
    const body = { app: app.id, type: "refund.issued", data: { id: 1 } };
    const first = await post("/v3/events", key, { json: body });
    expect(first.status).toBe(400);
    expect(first.body.error).toMatchObject({ type: "invalid_request_error", param: "type" });

    expect((await gw.request("POST", "/v3/event-types", { json: { name: "refund.issued" } })).status).toBe(
      201,
    );
    expectReplayOf(await post("/v3/events", key, { json: body }), first);
    expect((await gw.request("GET", `/v3/events?app=${app.id}&type=refund.issued`)).body.data).toEqual([]);
  });

  it("replays a 400 name-rule error for an event type", async () => {
    const key = newKey();
    const first = await post("/v3/event-types", key, { json: { name: "Bad Name" } });
    expect(first.status).toBe(400);
    expect(first.body.error.param).toBe("name");
    expectReplayOf(await post("/v3/event-types", key, { json: { name: "Bad Name" } }), first);
  });

  it("replays a 409 resource_exists after the conflicting app is gone", async () => {
    expect((await gw.request("POST", "/v3/apps", { json: { uid: "taken", name: "Holder" } })).status).toBe(
      201,
    );
    const key = newKey();
    const first = await post("/v3/apps", key, { json: { uid: "taken", name: "Newcomer" } });
    expect(first.status).toBe(409);
    expect(first.body.error).toMatchObject({ code: "resource_exists", param: "uid" });

    expect((await gw.request("DELETE", "/v3/apps/taken")).status).toBe(200);
    expectReplayOf(await post("/v3/apps", key, { json: { uid: "taken", name: "Newcomer" } }), first);
    expect((await gw.request("GET", "/v3/apps/taken")).status).toBe(404);
  });

  it("replays a 404 after the missing app is created", async () => {
    const key = newKey();
    const body = { app: "later-app", url: "https://example.com/later" };
    const first = await post("/v3/endpoints", key, { json: body });
    expect(first.status).toBe(404);
    expect(first.body.error).toMatchObject({ code: "resource_missing", param: "app" });

    expect((await gw.request("POST", "/v3/apps", { json: { uid: "later-app", name: "Later" } })).status).toBe(
      201,
    );
    expectReplayOf(await post("/v3/endpoints", key, { json: body }), first);
    expect(await count("/v3/endpoints?app=later-app")).toBe(0);
  });

  it("answers a body rejected by parameter validation with the same 400 every time", async () => {
    const key = newKey();
    const first = await post("/v3/apps", key, { json: { uid: "no-name" } });
    expect(first.status).toBe(400);
    expect(first.body.error).toMatchObject({ code: "parameter_missing", param: "name" });
    const again = await post("/v3/apps", key, { json: { uid: "no-name" } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual(first.body);
    expect((await gw.request("GET", "/v3/apps/no-name")).status).toBe(404);
  });
});

describe("the 24-hour window", () => {
  async function age(key: string, hours: number): Promise<void> {
    const client = new pg.Client({ connectionString: gw.databaseUrl });
    await client.connect();
    try {
      const res = await client.query(
        "UPDATE idempotency_records SET created_at = now() - make_interval(hours => $2) WHERE key = $1",
        [key, hours],
      );
      expect(res.rowCount).toBe(1);
    } finally {
      await client.end();
    }
  }

  it("replays a key used 23 hours ago", async () => {
    const key = newKey();
    const first = await post("/v3/apps", key, { json: { name: "Yesterday" } });
    expect(first.status).toBe(201);
    await age(key, 23);
    expectReplayOf(await post("/v3/apps", key, { json: { name: "Yesterday" } }), first);
    expect((await post("/v3/apps", key, { json: { name: "Other" } })).status).toBe(409);
  });

  it("forgets a key after 24 hours: it runs again", async () => {
    const key = newKey();
    const first = await post("/v3/apps", key, { json: { name: "Long ago" } });
    expect(first.status).toBe(201);
    await age(key, 25);
    const again = await post("/v3/apps", key, { json: { name: "Long ago, again" } });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
    expectReplayOf(await post("/v3/apps", key, { json: { name: "Long ago, again" } }), again);
  });
});

describe("the key itself", () => {
  it("must be 1 to 255 characters", async () => {
    const res = await post("/v3/apps", "k".repeat(256), { json: { name: "Long key" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "invalid_request_error", param: "Idempotency-Key" });
    expect(
      (await gw.request("GET", "/v3/apps?limit=100")).body.data.map((a: { name: string }) => a.name),
    ).not.toContain("Long key");
    expect((await post("/v3/apps", "k".repeat(255), { json: { name: "Max key" } })).status).toBe(201);
  });
});

describe("what a key remembers", () => {
  /** Every remembered response body of the gateway's database, as text. */
  async function rememberedBodies(): Promise<string> {
    const client = new pg.Client({ connectionString: gw.databaseUrl });
    await client.connect();
    try {
      const rows = await client.query<{ body: string }>(
        "SELECT response_body::text AS body FROM idempotency_records",
      );
      return rows.rows.map((r) => r.body).join("\n");
    } finally {
      await client.end();
    }
  }

  it("replays a new API key without keeping the key in plaintext (keys are stored hashed)", async () => {
    const key = newKey();
    const first = await post("/v3/api-keys", key, { json: { name: "retried" } });
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^hk_/);
    expect((await gw.request("GET", "/v3/apps", { key: first.body.key })).status).toBe(200);
    expect(await rememberedBodies()).not.toContain(first.body.key);
  });

  it("replays a rotated signing secret without keeping the secret in plaintext", async () => {
    const ep = await gw.request("POST", "/v3/endpoints", {
      json: { app: app.id, url: "https://example.com/sealed" },
    });
    const first = await post(`/v3/endpoints/${ep.body.id}/secret/rotate`, newKey());
    expect(first.status).toBe(200);
    expect(first.body.secret).toMatch(/^whsec_/);
    expect(await rememberedBodies()).not.toContain(first.body.secret);
  });
});
