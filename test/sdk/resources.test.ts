import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type App,
  Herald,
  HeraldApiError,
  HeraldAuthenticationError,
  HeraldConflictError,
  HeraldError,
  HeraldInvalidRequestError,
  HeraldNotFoundError,
  responseOf,
} from "../../packages/sdk/src/index.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let herald: Herald;
beforeAll(async () => {
  gw = await startGateway();
  herald = new Herald({ apiKey: gw.key, baseUrl: gw.url });
});
afterAll(() => gw.close());

/** The error a call rejects with. */
async function rejection(promise: Promise<unknown>): Promise<HeraldApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HeraldApiError);
  return err as HeraldApiError;
}

describe("the SDK against a real gateway", () => {
  it("creates, retrieves (by id and uid), updates, lists and deletes an app", async () => {
    const app = await herald.apps.create({ name: "Acme", uid: "acme-crud" });
    expect(app).toMatchObject({ object: "app", name: "Acme", uid: "acme-crud" });
    expect(responseOf(app)).toMatchObject({ status: 201, attempts: 1, replayed: false });
    expect(responseOf(app)!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(await herald.apps.retrieve("acme-crud")).toEqual(app);
    expect((await herald.apps.update(app.id, { name: "Acme Inc" })).name).toBe("Acme Inc");
    const page = await herald.apps.list().firstPage();
    expect(page.data.map((a) => a.id)).toContain(app.id);
    expect(await herald.apps.delete("acme-crud")).toEqual({ id: app.id, object: "app", deleted: true });
    await expect(herald.apps.retrieve(app.id)).rejects.toBeInstanceOf(HeraldNotFoundError);
  });

  it("manages event types and endpoints, sends an event, and reads it back", async () => {
    const app = await herald.apps.create({ name: "Shop", uid: "shop" });
    const type = await herald.eventTypes.create({
      name: "order.placed",
      description: "An order was placed.",
      schema: { type: "object", required: ["order"], properties: { order: { type: "string" } } },
    });
    expect(type).toMatchObject({ object: "event_type", name: "order.placed", archived: false });
    expect((await herald.eventTypes.update("order.placed", { description: "Placed." })).description).toBe(
      "Placed.",
    );
    expect((await herald.eventTypes.archive("order.placed")).archived).toBe(true);
    expect(await herald.eventTypes.list().toArray()).toEqual([]);
    expect((await herald.eventTypes.list({ include_archived: true }).toArray()).map((t) => t.name)).toEqual([
      "order.placed",
    ]);
    expect((await herald.eventTypes.unarchive("order.placed")).archived).toBe(false);
    expect((await herald.eventTypes.validateSchema({ schema: { type: "nope" } })).valid).toBe(false);

    const endpoint = await herald.endpoints.create({
      app: "shop",
      url: "https://example.com/hooks",
      event_types: ["order.placed"],
      headers: { "X-Shop": "1" },
    });
    expect(endpoint).toMatchObject({ object: "endpoint", app: app.id, headers: { "X-Shop": "[redacted]" } });
    expect((await herald.endpoints.retrieveSecret(endpoint.id)).secret).toMatch(/^whsec_/);
    const rotated = await herald.endpoints.rotateSecret(endpoint.id);
    expect(rotated.previous_secret_expires_at).toBeTruthy();
    expect((await herald.endpoints.update(endpoint.id, { disabled: true })).disabled).toBe(true);
    expect((await herald.endpoints.list({ app: "shop" }).toArray()).map((e) => e.id)).toEqual([endpoint.id]);

    const event = await herald.events.send({ app: "shop", type: "order.placed", data: { order: "o_1" } });
    expect(event).toMatchObject({
      object: "event",
      app: app.id,
      type: "order.placed",
      data: { order: "o_1" },
    });
    expect((await herald.events.retrieve(event.id)).id).toBe(event.id);
    const listed = await herald.events.list({ app: "shop", type: "order.placed" }).toArray();
    expect(listed.map((e) => e.id)).toEqual([event.id]);

    await herald.endpoints.update(endpoint.id, { disabled: false });
    const replay = await herald.endpoints.replay(endpoint.id);
    expect(replay).toMatchObject({ object: "replay", endpoint: endpoint.id, queued: 0 });
    expect((await herald.replays.retrieve(replay.id)).id).toBe(replay.id);
    expect(await herald.endpoints.delete(endpoint.id)).toMatchObject({ id: endpoint.id, deleted: true });
  });

  it("iterates every item of a list across pages, forward and backward, or gives one page", async () => {
    const made: App[] = [];
    for (let i = 0; i < 7; i++)
      made.push(await herald.apps.create({ name: `Paged ${i}`, uid: `paged-${i}` }));
    const ids = made.map((a) => a.id);
    const newestFirst = [...ids].reverse();

    const pages = [];
    for await (const page of herald.apps.list({ limit: 2 }).pages()) pages.push(page);
    const seen = pages.flatMap((p) => p.data.map((a) => a.id)).filter((id) => ids.includes(id));
    expect(pages.length).toBeGreaterThan(3);
    expect(seen).toEqual(newestFirst);
    expect(pages.at(-1)!.has_more).toBe(false);

    const all: string[] = [];
    for await (const app of herald.apps.list({ limit: 3 })) all.push(app.id);
    expect(all.filter((id) => ids.includes(id))).toEqual(newestFirst);
    expect(new Set(all).size).toBe(all.length);

    const first = await herald.apps.list({ limit: 2 }).firstPage();
    expect(first).toMatchObject({ object: "list", has_more: true });
    expect(first.data).toHaveLength(2);
    expect(responseOf(first)?.status).toBe(200);

    const after = await herald.apps.list({ limit: 2, starting_after: ids[4] }).toArray();
    expect(after.map((a) => a.id).slice(0, 4)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    // Backward from the oldest: the newer ones, nearest first.
    const before = await herald.apps.list({ limit: 2, ending_before: ids[0] }).toArray();
    expect(before.map((a) => a.id)).toEqual(ids.slice(1));
    expect(await herald.apps.list({ limit: 2 }).toArray({ max: 3 })).toHaveLength(3);
  });

  it("types errors with status, type, code, param and details", async () => {
    const invalid = await rejection(herald.apps.create({ name: "" }));
    expect(invalid).toBeInstanceOf(HeraldInvalidRequestError);
    expect(invalid).toMatchObject({ status: 400, type: "invalid_request_error", code: "parameter_invalid" });
    expect(invalid.param).toBe("name");
    // The gateway's Request-Id, to quote when asking what happened.
    expect(invalid.requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(invalid.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);

    const limit = await rejection(herald.apps.list({ limit: 0 }).firstPage());
    expect(limit).toMatchObject({ status: 400, param: "limit" });

    const missing = await rejection(herald.apps.retrieve("app_nope"));
    expect(missing).toBeInstanceOf(HeraldNotFoundError);
    expect(missing).toMatchObject({ status: 404, code: "resource_missing", param: "app" });

    await herald.apps.create({ name: "Taken", uid: "taken" });
    const taken = await rejection(herald.apps.create({ name: "Again", uid: "taken" }));
    expect(taken).toBeInstanceOf(HeraldConflictError);
    expect(taken).toMatchObject({ status: 409, code: "resource_exists", param: "uid" });

    await herald.eventTypes.create({ name: "strict.thing", schema: { type: "object", required: ["n"] } });
    const schema = await rejection(herald.events.send({ app: "taken", type: "strict.thing", data: {} }));
    expect(schema).toMatchObject({ status: 422, code: "schema_validation_failed", param: "data" });
    expect(schema.details).toEqual([{ path: "/n", message: "is required" }]);

    const unauthenticated = new Herald({ apiKey: "hk_wrong", baseUrl: gw.url });
    const auth = await rejection(unauthenticated.apps.list().firstPage());
    expect(auth).toBeInstanceOf(HeraldAuthenticationError);
    expect(auth).toMatchObject({ status: 401, type: "authentication_error" });
  });

  it("sends the caller's Idempotency-Key: the same body replays, another body is a 409", async () => {
    const key = `create-app-${Date.now()}`;
    const first = await herald.apps.create({ name: "Once" }, { idempotencyKey: key });
    const again = await herald.apps.create({ name: "Once" }, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    expect(responseOf(again)).toMatchObject({ replayed: true, idempotencyKey: key });
    const conflict = await rejection(herald.apps.create({ name: "Twice" }, { idempotencyKey: key }));
    expect(conflict).toBeInstanceOf(HeraldConflictError);
    expect(conflict).toMatchObject({ status: 409, code: "idempotency_conflict", idempotencyKey: key });
    // A new call without a key of its own gets a new one: two apps.
    const a = await herald.apps.create({ name: "Twin" });
    const b = await herald.apps.create({ name: "Twin" });
    expect(a.id).not.toBe(b.id);
  });

  it("refuses an empty path parameter instead of calling another route", async () => {
    await expect(herald.apps.retrieve("")).rejects.toThrow(HeraldError);
    await expect(herald.apps.retrieve("")).rejects.toThrow(/path parameter "app"/);
  });

  it("reads its API key and URL from HERALD_API_KEY and HERALD_URL", async () => {
    const saved = { key: process.env.HERALD_API_KEY, url: process.env.HERALD_URL };
    try {
      process.env.HERALD_API_KEY = gw.key;
      process.env.HERALD_URL = `${gw.url}/`;
      const fromEnv = new Herald();
      expect(fromEnv.baseUrl).toBe(gw.url);
      expect((await fromEnv.apps.list({ limit: 1 }).firstPage()).object).toBe("list");
      delete process.env.HERALD_API_KEY;
      expect(() => new Herald()).toThrow(/HERALD_API_KEY/);
    } finally {
      for (const [name, value] of [
        ["HERALD_API_KEY", saved.key],
        ["HERALD_URL", saved.url],
      ] as const)
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
  });
});
