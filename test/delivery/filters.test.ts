import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectMatches } from "../support/openapi.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Endpoint filters end to end: checked when saved (the part at fault named), matched at
 * fan-out (a filtered-out event makes no delivery), and explained by the dry run.
 */
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  await setupApp(sys, ["order.created", "order.paid"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys?.close();
  await receiver?.close();
});

describe("endpoint filters", () => {
  it("are refused with the place at fault, and kept as given", async () => {
    const bad = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `${receiver.url}/x`, filter: { "data.amount": { $regex: "^1" } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "filter_invalid", param: 'filter["data.amount"].$regex' });
    const notObject = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `${receiver.url}/x`, filter: ["type"] },
    });
    expect(notObject.status).toBe(400);
    expect(notObject.body.error.param).toMatch(/^filter/);

    const filter = { "data.amount": { $gte: 100 } };
    const ep = await f.endpoint("/kept", { filter });
    const shown = await sys.request("GET", `/v3/endpoints/${ep}`);
    expectMatches(shown.body, "Endpoint");
    expect(shown.body.filter).toEqual(filter);
    // In a form body, a JSON string.
    const form = await fetch(`${sys.url}/v3/endpoints/${ep}`, {
      method: "POST",
      headers: { authorization: `Bearer ${sys.key}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ filter: JSON.stringify({ type: "order.paid" }) }),
    });
    expect(form.status).toBe(200);
    expect(((await form.json()) as { filter: unknown }).filter).toEqual({ type: "order.paid" });
    const removed = await sys.request("POST", `/v3/endpoints/${ep}`, { json: { filter: null } });
    expect(removed.body.filter).toBeNull();
    expect((await sys.request("DELETE", `/v3/endpoints/${ep}`)).status).toBe(200);
  });

  it("deliver only what matches, and say why not in a dry run", async () => {
    const big = await f.endpoint("/big", { filter: { "data.amount": { $gte: 100 } } });
    const eur = await f.endpoint("/eur", {
      event_types: ["order.paid"],
      filter: { $or: [{ "data.currency": "EUR" }, { "data.items.sku": "gift" }] },
    });
    const all = await f.endpoint("/all");

    const small = await f.send("order.created", { amount: 5, currency: "EUR" });
    const large = await f.send("order.paid", { amount: 500, currency: "USD" });
    const gift = await f.send("order.paid", {
      amount: 1,
      currency: "USD",
      items: [{ sku: "a" }, { sku: "gift" }],
    });
    for (const [event, expected] of [
      [small, [all]],
      [large, [big, all]],
      [gift, [eur, all]],
    ] as const) {
      await expect
        .poll(async () => (await f.deliveries(event)).filter((d) => d.status === "succeeded").length, {
          timeout: 15_000,
        })
        .toBe(expected.length);
      expect((await f.deliveries(event)).map((d) => d.endpoint).sort()).toEqual([...expected].sort());
    }
    expect(receiver.received("/big").map((r) => r.headers["webhook-id"])).toEqual([large]);
    expect(receiver.received("/eur").map((r) => r.headers["webhook-id"])).toEqual([gift]);

    const dry = await sys.request("POST", "/v3/events/dry-run", {
      json: { app: "acme", type: "order.created", data: { amount: 5 } },
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expectMatches(dry.body, "EventDryRun");
    const byId = Object.fromEntries(dry.body.endpoints.map((e: { endpoint: string }) => [e.endpoint, e]));
    expect(byId[big]).toMatchObject({ receives: false, reason: "filter" });
    expect(byId[eur]).toMatchObject({ receives: false, reason: "event_types" });
    expect(byId[all]).toMatchObject({ receives: true, reason: null });
    // Nothing was stored.
    expect((await sys.request("GET", "/v3/events?type=order.created&limit=100")).body.data).toHaveLength(1);
    const unknown = await sys.request("POST", "/v3/events/dry-run", {
      json: { app: "acme", type: "nope", data: {} },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe("type");
  });
});
