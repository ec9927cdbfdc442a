import { topologyNames } from "@herald/broker";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { drainQueue } from "../support/isolation.ts";
import { expectList, expectMatches } from "../support/openapi.ts";
import { type Seeder, seeder } from "../support/seed.ts";

let gw: TestGateway;
let seed: Seeder;
beforeAll(async () => {
  gw = await startGateway();
  seed = seeder(gw.databaseUrl);
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  for (const name of ["invoice.paid", "invoice.voided"])
    await gw.request("POST", "/v3/event-types", { json: { name } });
});
afterAll(async () => {
  await seed.close();
  await gw.close();
});

describe.each(["json", "form"] as const)("endpoints with %s bodies", (mode) => {
  const send = (method: string, path: string, values: Record<string, unknown>) =>
    gw.request(method, path, mode === "json" ? { json: values } : { form: values });

  it("creates, retrieves, lists, updates, disables and enables an endpoint", async () => {
    const created = await send("POST", "/v3/endpoints", {
      app: "acme",
      url: "https://hooks.example.com/herald",
      description: "Billing",
      event_types: ["invoice.paid"],
      headers: { "X-Tenant": "acme" },
    });
    expect(created.status).toBe(201);
    expectMatches(created.body, "Endpoint");
    expect(created.body).toMatchObject({
      object: "endpoint",
      url: "https://hooks.example.com/herald",
      description: "Billing",
      event_types: ["invoice.paid"],
      // Write-only: the name, never the value.
      headers: { "X-Tenant": "[redacted]" },
      disabled: false,
      disabled_reason: null,
    });
    expect(JSON.stringify(created.body)).not.toContain("whsec_");
    const id = created.body.id as string;
    expect((await gw.request("GET", `/v3/endpoints/${id}`)).body).toEqual(created.body);

    const list = await gw.request("GET", "/v3/endpoints?app=acme");
    expectList(list.body, "Endpoint");
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(id);

    const updated = await send("POST", `/v3/endpoints/${id}`, {
      event_types: ["invoice.paid", "invoice.voided"],
      disabled: true,
    });
    expect(updated.body).toMatchObject({ event_types: ["invoice.paid", "invoice.voided"], disabled: true });
    expect(updated.body.disabled_reason).toEqual(expect.any(String));
    const enabled = await send("POST", `/v3/endpoints/${id}`, {
      disabled: false,
      url: "https://hooks.example.com/v2",
    });
    expect(enabled.body).toMatchObject({
      disabled: false,
      disabled_reason: null,
      url: "https://hooks.example.com/v2",
    });
  });

  it("reads and rotates the signing secret, keeping the old one for 24 hours", async () => {
    const created = await send("POST", "/v3/endpoints", { app: "acme", url: "https://example.com/a" });
    const id = created.body.id as string;
    const first = await gw.request("GET", `/v3/endpoints/${id}/secret`);
    expectMatches(first.body, "EndpointSecret");
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    // A secret Herald makes is one the Standard Webhooks reference library accepts.
    expect(() => new Webhook(first.body.secret)).not.toThrow();

    const rotated = await send("POST", `/v3/endpoints/${id}/secret/rotate`, {});
    expect(rotated.body.secret).not.toBe(first.body.secret);
    const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3600 * 1000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600 * 1000);
    expect((await gw.request("GET", `/v3/endpoints/${id}/secret`)).body.secret).toBe(rotated.body.secret);

    const own = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    expect((await send("POST", `/v3/endpoints/${id}/secret/rotate`, { secret: own })).body.secret).toBe(own);
  });

  it("accepts a secret of the caller's own at creation", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const created = await send("POST", "/v3/endpoints", {
      app: "acme",
      url: "https://example.com/own",
      secret,
    });
    expect((await gw.request("GET", `/v3/endpoints/${created.body.id}/secret`)).body.secret).toBe(secret);
  });
});

describe("endpoint rules", () => {
  it.each([
    ["url", { url: "ftp://example.com" }],
    ["url", { url: "not a url" }],
    ["url", { url: "https://user:pw@example.com" }],
    ["event_types[1]", { event_types: ["invoice.paid", "nope.missing"] }],
    ["headers[webhook-signature]", { headers: { "webhook-signature": "x" } }],
    ["headers[Content-Type]", { headers: { "Content-Type": "text/plain" } }],
    ["headers[bad header]", { headers: { "bad header": "x" } }],
    ["secret", { secret: "whsec_short" }],
    ["secret", { secret: "not-a-secret" }],
    ["app", { app: "no-such-app" }],
  ])("refuses a bad %s", async (param, overrides) => {
    const res = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://example.com/x", ...overrides },
    });
    expect(res.status).toBe(param === "app" ? 404 : 400);
    expect(res.body.error.param).toBe(param);
  });

  it("clears the event type filter with an empty form field", async () => {
    const created = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://example.com/f", event_types: ["invoice.paid"] },
    });
    const cleared = await gw.request("POST", `/v3/endpoints/${created.body.id}`, {
      raw: { type: "application/x-www-form-urlencoded", body: "event_types=" },
    });
    expect(cleared.body.event_types).toEqual([]);
  });
});

describe("deleting an endpoint", () => {
  it("answers deleted, hides it, keeps its log readable, and announces it to the dispatcher", async () => {
    const created = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://example.com/del" },
    });
    const id = created.body.id as string;
    const event = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "invoice.paid", data: { n: 1 } },
    });
    const delivery = await seed.delivery({ eventId: event.body.id, endpointId: id, status: "failed" });
    const attempt = await seed.attempt({ deliveryId: delivery, status: "failed", attemptNumber: 1 });

    const res = await gw.request("DELETE", `/v3/endpoints/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, object: "endpoint", deleted: true });
    expect((await gw.request("GET", `/v3/endpoints/${id}`)).status).toBe(404);
    expect((await gw.request("DELETE", `/v3/endpoints/${id}`)).status).toBe(404);
    expect(
      (await gw.request("GET", "/v3/endpoints?app=acme")).body.data.map((e: { id: string }) => e.id),
    ).not.toContain(id);

    const attempts = await gw.request("GET", `/v3/attempts?endpoint=${id}`);
    expect(attempts.body.data.map((a: { id: string }) => a.id)).toEqual([attempt]);
    expect((await gw.request("GET", `/v3/events/${event.body.id}`)).body.deliveries).toEqual([
      expect.objectContaining({ endpoint: id, status: "failed" }),
    ]);

    await expect
      .poll(async () => await gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 5000 })
      .toBe(0);
    const messages = await drainQueue(topologyNames(gw.prefix).queues.dispatcherControl);
    expect(messages).toEqual([
      expect.objectContaining({
        name: "endpoint.deleted.v1",
        body: expect.objectContaining({ endpoint_id: id }),
      }),
    ]);
  });
});

describe("replaying an endpoint's failed deliveries", () => {
  it("queues exactly the failed deliveries that match, all, since a time, or one event", async () => {
    const ep = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://example.com/r" } })
    ).body.id as string;
    const events: string[] = [];
    for (let i = 0; i < 4; i++) {
      events.push(
        (await gw.request("POST", "/v3/events", { json: { app: "acme", type: "invoice.paid", data: { i } } }))
          .body.id,
      );
    }
    const old = new Date(Date.now() - 3600_000);
    await seed.delivery({ eventId: events[0]!, endpointId: ep, status: "failed", lastAttemptAt: old });
    await seed.delivery({ eventId: events[1]!, endpointId: ep, status: "failed" });
    await seed.delivery({ eventId: events[2]!, endpointId: ep, status: "succeeded" });
    await seed.delivery({ eventId: events[3]!, endpointId: ep, status: "retrying" });
    await drainQueue(topologyNames(gw.prefix).queues.dispatcherControl);

    // Each replay counts what no unfinished replay counted before it: here no dispatcher runs,
    // so none finishes.
    const since = await gw.request("POST", `/v3/endpoints/${ep}/replay`, {
      form: { since: Math.floor((Date.now() - 600_000) / 1000) },
    });
    expect(since.status).toBe(202);
    expectMatches(since.body, "Replay");
    expect(since.body).toMatchObject({ object: "replay", endpoint: ep, queued: 1, status: "queued" });
    const sinceIso = await gw.request("POST", `/v3/endpoints/${ep}/replay`, {
      json: { since: new Date(old.getTime() - 1000).toISOString() },
    });
    expect(sinceIso.body.queued).toBe(1);
    const all = await gw.request("POST", `/v3/endpoints/${ep}/replay`, { form: {} });
    expect(all.body).toMatchObject({ queued: 0, status: "completed" });
    const none = await gw.request("POST", `/v3/endpoints/${ep}/replay`, { json: { event: events[2] } });
    expect(none.body).toMatchObject({ queued: 0, status: "completed", event: events[2] });

    expect((await gw.request("GET", `/v3/replays/${since.body.id}`)).body).toEqual(since.body);
    await expect
      .poll(async () => await gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 5000 })
      .toBe(0);
    const messages = await drainQueue(topologyNames(gw.prefix).queues.dispatcherControl);
    // One message per replay that queued something; the empty ones need no dispatcher work.
    expect(messages.map((m) => m.name)).toEqual(Array(2).fill("replay.requested.v1"));
    expect(messages[0]!.body).toMatchObject({
      replay_id: since.body.id,
      endpoint_id: ep,
      event_id: null,
      claimed: true,
    });
  });

  it("counts each delivery once when replays are asked for at the same moment", async () => {
    const ep = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://example.com/race" } })
    ).body.id as string;
    const events: string[] = [];
    for (let i = 0; i < 6; i++) {
      const event = await gw.request("POST", "/v3/events", {
        json: { app: "acme", type: "invoice.paid", data: { i } },
      });
      events.push(event.body.id);
      await seed.delivery({ eventId: event.body.id, endpointId: ep, status: "failed" });
    }
    for (let round = 0; round < 3; round++) {
      const before = new Date(Date.now() - 3600_000).toISOString();
      // One event's, and since a time before it: at once, as a client retrying might.
      const asked = await Promise.all([
        gw.request("POST", `/v3/endpoints/${ep}/replay`, { json: { event: events[round] } }),
        gw.request("POST", `/v3/endpoints/${ep}/replay`, { json: { since: before } }),
        gw.request("POST", `/v3/endpoints/${ep}/replay`, { json: {} }),
      ]);
      expect(asked.map((r) => r.status)).toEqual([202, 202, 202]);
      // Every failed delivery counted by exactly one of them.
      expect(asked.reduce((sum, r) => sum + r.body.queued, 0)).toBe(round === 0 ? 6 : 0);
      expect(asked[0]!.body.queued).toBeLessThanOrEqual(1);
    }
    await drainQueue(topologyNames(gw.prefix).queues.dispatcherControl);
  });

  it("refuses a bad since, an unknown event and a disabled endpoint", async () => {
    const ep = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://example.com/r2" } })
    ).body.id as string;
    expect(
      (await gw.request("POST", `/v3/endpoints/${ep}/replay`, { json: { since: "yesterday" } })).body.error
        .param,
    ).toBe("since");
    const unknown = await gw.request("POST", `/v3/endpoints/${ep}/replay`, {
      json: { event: "evt_01M804J3XYDPH8SHENBBVWZHZH" },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe("event");
    await gw.request("POST", `/v3/endpoints/${ep}`, { json: { disabled: true } });
    expect((await gw.request("POST", `/v3/endpoints/${ep}/replay`, { json: {} })).body.error.code).toBe(
      "endpoint_disabled",
    );
  });
});

describe("a fresh start for an endpoint's deliveries", () => {
  it("ends a pause when the endpoint is enabled again or gets a new URL, and not otherwise", async () => {
    const db = new pg.Client({ connectionString: gw.databaseUrl });
    await db.connect();
    try {
      const pause = (id: string) =>
        db.query(
          `UPDATE endpoint_flows SET pause_reason = 'not_responding', paused_until = now() + interval '5 minutes',
                  failures = 5 WHERE endpoint_id = $1`,
          [id],
        );
      const state = async (id: string) =>
        (await gw.request("GET", `/v3/endpoints/${id}`)).body.delivery_state.state as string;
      const create = async (url: string) =>
        (await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url } })).body.id as string;
      const [reenabled, moved] = [
        await create("https://example.com/f1"),
        await create("https://example.com/f2"),
      ];
      for (const id of [reenabled, moved]) {
        await pause(id);
        expect(await state(id)).toBe("paused");
      }

      // A change of description leaves the pause as it is.
      const kept = await gw.request("POST", `/v3/endpoints/${moved}`, { json: { description: "same URL" } });
      expect(kept.body.delivery_state.state).toBe("paused");

      await gw.request("POST", `/v3/endpoints/${reenabled}`, { json: { disabled: true } });
      const enabled = await gw.request("POST", `/v3/endpoints/${reenabled}`, { json: { disabled: false } });
      const changed = await gw.request("POST", `/v3/endpoints/${moved}`, {
        json: { url: "https://example.com/f2-new" },
      });
      // The answer says so already, and the flow's row agrees.
      for (const res of [enabled, changed])
        expect(res.body.delivery_state).toMatchObject({ state: "active" });
      const { rows } = await db.query(
        "SELECT pause_reason, paused_until, failures FROM endpoint_flows WHERE endpoint_id = ANY($1) ORDER BY endpoint_id",
        [[reenabled, moved]],
      );
      expect(rows).toEqual([
        { pause_reason: null, paused_until: null, failures: 0 },
        { pause_reason: null, paused_until: null, failures: 0 },
      ]);
    } finally {
      await db.end();
    }
  });
});
