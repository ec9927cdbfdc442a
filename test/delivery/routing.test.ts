import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  await setupApp(sys, ["invoice.paid", "invoice.voided", "user.created"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

describe("fan-out", () => {
  it("routes by event type: one delivery per subscribed endpoint, empty filter meaning all", async () => {
    const paid = await f.endpoint("/paid", { event_types: ["invoice.paid"] });
    const all = await f.endpoint("/all");
    const users = await f.endpoint("/users", { event_types: ["user.created"] });
    const disabled = await f.endpoint("/disabled", { disabled: true });
    const deleted = await f.endpoint("/deleted");
    await sys.request("DELETE", `/v3/endpoints/${deleted}`);

    const eventId = await f.send("invoice.paid");
    await expect
      .poll(async () => (await f.deliveries(eventId)).filter((d) => d.status === "succeeded").length, {
        timeout: 10_000,
      })
      .toBe(2);
    const endpoints = (await f.deliveries(eventId)).map((d) => d.endpoint).sort();
    expect(endpoints).toEqual([paid, all].sort());
    expect(receiver.received("/paid")).toHaveLength(1);
    expect(receiver.received("/all")).toHaveLength(1);
    for (const path of ["/users", "/disabled", "/deleted"]) expect(receiver.received(path)).toHaveLength(0);

    const userEvent = await f.send("user.created");
    await expect.poll(() => receiver.received("/users").length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => receiver.received("/all").length, { timeout: 10_000 }).toBe(2);
    expect((await f.deliveries(userEvent)).map((d) => d.endpoint).sort()).toEqual([all, users].sort());
    expect(receiver.received("/paid")).toHaveLength(1);
    expect(disabled).toBeTruthy();
  });

  it("creates nothing twice when the same event is announced again", async () => {
    const ep = await f.endpoint("/twice");
    const eventId = await f.send("invoice.voided");
    await expect.poll(() => f.status(eventId, ep), { timeout: 10_000 }).toBe("succeeded");
    const event = await sys.gateway.deps.prisma.event.findUniqueOrThrow({ where: { id: eventId } });
    const before = await sys.gateway.deps.prisma.delivery.count({ where: { eventId } });
    expect(before).toBeGreaterThanOrEqual(2);
    // The outbox relay may publish an event twice; the dispatcher must not fan it out twice.
    await sys.gateway.deps.broker.publish("event.created.v1", {
      event_id: eventId,
      account_id: event.accountId,
      app_id: event.appId,
      type: event.type,
      created_at: event.createdAt.toISOString(),
    });
    // The witness: an event announced after it is fanned out after it, by the same queue.
    const witness = await f.send("invoice.voided");
    await expect.poll(() => f.status(witness, ep), { timeout: 10_000 }).toBe("succeeded");
    expect(await sys.gateway.deps.prisma.delivery.count({ where: { eventId } })).toBe(before);
    expect(await sys.gateway.deps.prisma.attempt.count({ where: { eventId, endpointId: ep } })).toBe(1);
    expect(receiver.received("/twice").filter((r) => r.headers["webhook-id"] === eventId)).toHaveLength(1);
  });

  it("signs with both secrets during a rotation", async () => {
    const ep = await f.endpoint("/rotated");
    const old = (await sys.request("GET", `/v3/endpoints/${ep}/secret`)).body.secret;
    const fresh = (await sys.request("POST", `/v3/endpoints/${ep}/secret/rotate`)).body.secret;
    await f.send("invoice.paid");
    await expect.poll(() => receiver.received("/rotated").length, { timeout: 10_000 }).toBe(1);
    const { Webhook } = await import("standardwebhooks");
    const req = receiver.received("/rotated")[0]!;
    const headers = {
      "webhook-id": String(req.headers["webhook-id"]),
      "webhook-timestamp": String(req.headers["webhook-timestamp"]),
      "webhook-signature": String(req.headers["webhook-signature"]),
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [old, fresh])
      expect(() => new Webhook(secret).verify(req.body, headers)).not.toThrow();
  });
});

describe("test events", () => {
  it("reach the one endpoint they are sent to, with the type's example payload", async () => {
    await sys.request("POST", "/v3/event-types", {
      json: {
        name: "order.tested",
        schema: {
          type: "object",
          required: ["order_id"],
          properties: { order_id: { type: "string", examples: ["ord_1"] } },
        },
      },
    });
    const target = await f.endpoint("/test-target", { event_types: ["order.tested"] });
    const bystander = await f.endpoint("/test-bystander", { event_types: ["order.tested"] });
    const res = await sys.request("POST", `/v3/endpoints/${target}/test`, { form: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ object: "event", type: "order.tested", data: { order_id: "ord_1" } });
    await expect.poll(() => f.status(res.body.id, target), { timeout: 10_000 }).toBe("succeeded");
    expect(JSON.parse(receiver.received("/test-target")[0]!.body).data).toEqual({ order_id: "ord_1" });
    expect((await f.deliveries(res.body.id)).map((d) => d.endpoint)).toEqual([target]);
    // The witness: an ordinary event sent after it reaches the bystander, the test event never.
    const ordinary = await f.send("order.tested", { order_id: "ord_2" });
    await expect.poll(() => f.status(ordinary, bystander), { timeout: 10_000 }).toBe("succeeded");
    expect(receiver.received("/test-bystander").map((r) => r.headers["webhook-id"])).toEqual([ordinary]);
  });

  it("refuse a type the endpoint does not receive, and data that breaks the schema", async () => {
    const ep = await f.endpoint("/test-picky", { event_types: ["invoice.paid"] });
    const wrong = await sys.request("POST", `/v3/endpoints/${ep}/test`, { json: { type: "user.created" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.param).toBe("type");
    const bad = await sys.request("POST", `/v3/endpoints/order-less/test`, { json: {} });
    expect(bad.status).toBe(404);
    const breaks = await sys.request(
      "POST",
      `/v3/endpoints/${await f.endpoint("/test-strict", { event_types: ["order.tested"] })}/test`,
      {
        json: { data: { order_id: 5 } },
      },
    );
    expect(breaks.status).toBe(422);
  });
});
