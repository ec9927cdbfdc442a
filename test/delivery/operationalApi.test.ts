import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntilHandled } from "../support/consumers.ts";
import { type OperationalSystem, startOperationalSystem } from "../support/operational.ts";
import { deadPort } from "../support/ports.ts";

/**
 * Operational endpoints through the API's other routes: their test events are of an ordinary
 * type, never one of Herald's own; the endpoints' health leaves them out unless their app is
 * named; and changes that concurrent requests make at once (a disable, a recovery by a new URL or
 * by enabling) are told once. (What they are told of deliveries: operationalEndpoints.test.ts.)
 */
let sys: OperationalSystem["sys"];
let receiver: OperationalSystem["receiver"];
let f: OperationalSystem["f"];
let opsEndpoint: string;
let opsApp: string;
let toldOf: OperationalSystem["toldOf"];
let waitTold: OperationalSystem["waitTold"];
let storedAbout: OperationalSystem["storedAbout"];
let waitAllTold: OperationalSystem["waitAllTold"];
let expectDocumented: OperationalSystem["expectDocumented"];
let ops: OperationalSystem;

beforeAll(async () => {
  ops = await startOperationalSystem();
  ({ sys, receiver, f, opsEndpoint, opsApp, toldOf, waitTold, storedAbout, waitAllTold, expectDocumented } =
    ops);
});
afterAll(async () => {
  await ops?.close();
});

describe("operational endpoints' test events", () => {
  it("are of an ordinary type, never one of Herald's own", async () => {
    // The account may name a type of its own as Herald names a notice: the operational app never takes it.
    const own = await sys.request("POST", "/v3/event-types", { json: { name: "endpoint.disabled" } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);

    const forged = await sys.request("POST", `/v3/endpoints/${opsEndpoint}/test`, {
      json: { type: "endpoint.disabled", data: { endpoint: "ep_fake", trigger: "manual" } },
    });
    expect(forged.status, JSON.stringify(forged.body)).toBe(400);
    expect(forged.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "operational_type",
      param: "type",
    });

    // Without `type`: an ordinary one (not the account's first by name, which is Herald's).
    const test = await sys.request("POST", `/v3/endpoints/${opsEndpoint}/test`, { json: {} });
    expect(test.status, JSON.stringify(test.body)).toBe(201);
    expect(test.body).toMatchObject({ object: "event", app: opsApp, type: "order.placed" });
    await expect
      .poll(() => receiver.received("/ops").filter((r) => r.headers["webhook-id"] === test.body.id).length, {
        timeout: 10_000,
      })
      .toBe(1);

    // One that takes some of Herald's types only still gets an ordinary test event, and no forged one.
    const filtered = await sys.request("POST", "/v3/operational-endpoints", {
      json: { url: `${receiver.url}/ops-filtered`, event_types: ["endpoint.disabled"] },
    });
    expect(filtered.status, JSON.stringify(filtered.body)).toBe(201);
    for (const type of ["endpoint.disabled", "endpoint.paused"]) {
      const refused = await sys.request("POST", `/v3/endpoints/${filtered.body.id}/test`, { json: { type } });
      expect(refused.status, `${type}: ${JSON.stringify(refused.body)}`).toBe(400);
      expect(refused.body.error.param).toBe("type");
    }
    const ordinary = await sys.request("POST", `/v3/endpoints/${filtered.body.id}/test`, { form: {} });
    expect(ordinary.status, JSON.stringify(ordinary.body)).toBe(201);
    expect(ordinary.body.type).toBe("order.placed");
    await expect
      .poll(() => f.status(ordinary.body.id, filtered.body.id), { timeout: 10_000 })
      .toBe("succeeded");
    expect(receiver.received("/ops-filtered").map((r) => JSON.parse(r.body).type)).toEqual(["order.placed"]);
    await sys.request("DELETE", `/v3/endpoints/${filtered.body.id}`);

    // An ordinary endpoint takes the account's own type of that name, as before.
    const customer = await f.endpoint("/own-type");
    const allowed = await sys.request("POST", `/v3/endpoints/${customer}/test`, {
      json: { type: "endpoint.disabled" },
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
    expect(allowed.body.app).not.toBe(opsApp);
  });
});

describe("endpoints' health", () => {
  it("leaves the operational endpoints out unless their app is named", async () => {
    const customer = await f.endpoint("/health-listed");
    const all = await sys.request("GET", "/v3/stats/endpoints?limit=100");
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    const listed = all.body.data.map((h: { endpoint: string }) => h.endpoint);
    expect(listed).toContain(customer);
    expect(listed).not.toContain(opsEndpoint);
    expect(all.body.data.map((h: { app: string }) => h.app)).not.toContain(opsApp);

    const named = await sys.request("GET", `/v3/stats/endpoints?app=${opsApp}&limit=100`);
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect(named.body.data.map((h: { endpoint: string }) => h.endpoint)).toContain(opsEndpoint);
    expect(named.body.data.map((h: { app: string }) => h.app)).toEqual(named.body.data.map(() => opsApp));
  });
});

describe("changes made through the API at once", () => {
  const update = (id: string, json: Record<string, unknown>) =>
    sys.request("POST", `/v3/endpoints/${id}`, { json });

  it("tell a manual disable once, however many requests make it", async () => {
    const ep = await f.endpoint("/disabled-at-once");
    const replies = await Promise.all(Array.from({ length: 8 }, () => update(ep, { disabled: true })));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(replies.every((r) => r.body.disabled)).toBe(true);
    expect(await storedAbout(ep, "endpoint.disabled")).toHaveLength(1);
    await waitTold("endpoint.disabled", ep);
    // The requests have all been answered, so the one notice stored is all there is; once its
    // delivery has ended, no attempt of it is made again.
    await waitAllTold(ep, "endpoint.disabled");
    expect(toldOf("endpoint.disabled", ep)).toHaveLength(1);
  });

  it("tell a pause ended by a new URL as a recovery, once", async () => {
    const port = await deadPort();
    const ep = await f.endpoint("", { url: `http://127.0.0.1:${port}/gone-quiet` });
    const held = [await f.send("order.placed"), await f.send("order.placed")];
    await waitTold("endpoint.paused", ep);
    expect(await storedAbout(ep, "endpoint.recovered")).toEqual([]);

    const replies = await Promise.all(
      Array.from({ length: 4 }, () => update(ep, { url: `${receiver.url}/moved` })),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(replies.every((r) => r.body.delivery_state.state !== "paused")).toBe(true);
    const stored = await storedAbout(ep, "endpoint.recovered");
    expect(stored).toHaveLength(1);
    expect(stored[0]!.data).toMatchObject({ trigger: "manual", url: `${receiver.url}/moved` });

    const recovered = await waitTold("endpoint.recovered", ep);
    expectDocumented(recovered);
    // The held deliveries go to the new URL; that answer closes no breaker, so nothing more is told.
    await expect.poll(() => receiver.received("/moved").length, { timeout: 10_000 }).toBe(2);
    // A recovery those answers told would be stored by the handler of their results, just after
    // it records them (resultStatements.ts: a statement of its own). Recorded, the results are in the
    // dispatchers' hands or handled; once those hold no result, every notice about ep is stored.
    await expect
      .poll(() => Promise.all(held.map((event) => f.status(event, ep))), { timeout: 10_000 })
      .toEqual(["succeeded", "succeeded"]);
    const brokers = sys.dispatchers.map((d) => d.deps.broker);
    const { queues } = brokers[0]!.topology;
    await waitUntilHandled(brokers, [queues.dispatcherResults, queues.dispatcherResultBatches]);
    await waitAllTold(ep, "endpoint.recovered");
    expect(toldOf("endpoint.recovered", ep)).toHaveLength(1);
    expect(await storedAbout(ep, "endpoint.recovered")).toHaveLength(1);
  });

  it("tell an endpoint enabled again as a recovery, once; a new URL of a healthy one not at all", async () => {
    const ep = await f.endpoint("/enabled-again");
    await update(ep, { disabled: true });
    const replies = await Promise.all(Array.from({ length: 6 }, () => update(ep, { disabled: false })));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    const stored = await storedAbout(ep, "endpoint.recovered");
    expect(stored).toHaveLength(1);
    expect(stored[0]!.data).toMatchObject({ trigger: "manual" });

    const healthy = await f.endpoint("/healthy-before");
    expect((await update(healthy, { url: `${receiver.url}/healthy-after` })).status).toBe(200);
    // Enabling one that was not disabled ends nothing either.
    expect((await update(healthy, { disabled: false })).status).toBe(200);
    expect(await storedAbout(healthy)).toEqual([]);
  });
});
