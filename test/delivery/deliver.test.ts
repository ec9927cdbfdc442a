import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectMatches } from "../support/openapi.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  await sys.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  for (const name of ["invoice.paid", "invoice.voided", "user.created"])
    await sys.request("POST", "/v3/event-types", { json: { name } });
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

async function endpoint(path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await sys.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: `${receiver.url}${path}`, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function send(type: string, data: Record<string, unknown> = { n: 1 }): Promise<string> {
  const res = await sys.request("POST", "/v3/events", { json: { app: "acme", type, data } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function deliveries(eventId: string) {
  return (await sys.request("GET", `/v3/events/${eventId}`)).body.deliveries as {
    endpoint: string;
    status: string;
    attempts: number;
  }[];
}

describe("delivery", () => {
  it("delivers a signed Standard Webhooks request that the reference library verifies", async () => {
    const ep = await endpoint("/signed", { headers: { "X-Tenant": "acme" } });
    const secret = (await sys.request("GET", `/v3/endpoints/${ep}/secret`)).body.secret as string;
    const data = { invoice_id: "in_1", amount: 1200 };
    const eventId = await send("invoice.paid", data);

    await expect.poll(() => receiver.received("/signed").length, { timeout: 10_000 }).toBe(1);
    const request = receiver.received("/signed")[0]!;
    expect(request.headers["webhook-id"]).toBe(eventId);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-tenant"]).toBe("acme");
    const verified = new Webhook(secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    });
    expect(verified).toEqual({ type: "invoice.paid", timestamp: expect.any(String), data });

    await expect
      .poll(async () => (await deliveries(eventId))[0]?.status, { timeout: 10_000 })
      .toBe("succeeded");
    expect(await deliveries(eventId)).toEqual([
      expect.objectContaining({ endpoint: ep, status: "succeeded", attempts: 1, next_attempt_at: null }),
    ]);
    const attempts = (await sys.request("GET", `/v3/attempts?event=${eventId}`)).body.data;
    expect(attempts).toHaveLength(1);
    expectMatches(attempts[0], "Attempt");
    expect(attempts[0]).toMatchObject({
      status: "succeeded",
      attempt_number: 1,
      response_status: 200,
      response_body: "ok",
      error: null,
    });
    expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(0);
  });
});
