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

type SentRequest = { headers: Record<string, string> | null; body: string };

/** Each header recorded for the attempt, checked against what the receiver got. */
function expectSameRequest(
  recorded: SentRequest,
  received: { headers: Record<string, unknown>; body: string },
) {
  expect(recorded.body).toBe(received.body);
  expect(recorded.headers).not.toBeNull();
  const names = Object.keys(recorded.headers!).map((n) => n.toLowerCase());
  for (const name of ["content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature"])
    expect(names).toContain(name);
  // The endpoint's own headers are write-only: recorded by name, their values redacted.
  for (const [name, value] of Object.entries(recorded.headers!))
    if (value !== "[redacted]") expect(received.headers[name.toLowerCase()], name).toBe(value);
}

describe("an attempt's request", () => {
  it("is recorded as sent: the headers the receiver got, and the body byte for byte", async () => {
    const ok = await endpoint("/recorded-ok", { headers: { "X-Tenant": "acme", "X-Trace-Me": "1" } });
    receiver.on("/recorded-bad", { status: 500 });
    const bad = await endpoint("/recorded-bad", { headers: { "X-Tenant": "bad" } });
    const secret = (await sys.request("GET", `/v3/endpoints/${ok}/secret`)).body.secret as string;
    // jsonb's own text form (spaces after ':' and ','), unicode and markup: sent as stored.
    const data = { note: "café ☕ <b>bold</b>", amount: 1200.5, nested: { list: [1, null, "two"] } };
    const eventId = await send("invoice.paid", data);

    const firstAttempt = async (ep: string) =>
      (await sys.request("GET", `/v3/attempts?endpoint=${ep}&limit=100`)).body.data.find(
        (a: { attempt_number: number }) => a.attempt_number === 1,
      );
    // A success is recorded in the dispatcher's batches, a failure one at a time: both keep it.
    await expect.poll(async () => (await firstAttempt(ok))?.status, { timeout: 10_000 }).toBe("succeeded");
    await expect.poll(async () => (await firstAttempt(bad))?.status, { timeout: 10_000 }).toBe("failed");
    for (const [ep, path] of [
      [ok, "/recorded-ok"],
      [bad, "/recorded-bad"],
    ] as const) {
      const first = await firstAttempt(ep);
      expect(first).not.toHaveProperty("request");
      const res = await sys.request("GET", `/v3/attempts/${first.id}`);
      expect(res.status).toBe(200);
      expectMatches(res.body, "AttemptWithRequest");
      const got = receiver.received(path)[0]!;
      expectSameRequest(res.body.request, got);
    }

    const attempt = (await sys.request("GET", `/v3/attempts?endpoint=${ok}`)).body.data[0];
    const { request } = (await sys.request("GET", `/v3/attempts/${attempt.id}`)).body as {
      request: SentRequest;
    };
    expect(request.headers!["X-Tenant"]).toBe("[redacted]");
    expect(request.headers!["webhook-id"]).toBe(eventId);
    // What is shown verifies as the receiver's copy did: the signature covers this exact body.
    expect(new Webhook(secret).verify(request.body, request.headers!)).toEqual({
      type: "invoice.paid",
      timestamp: expect.any(String),
      data,
    });
  });

  it("keeps none of the custom header values: [redacted] in the API, sealed at rest, the receiver got them", async () => {
    const credentials = {
      Authorization: "Bearer live-auth-1",
      "X-Api-Key": "live-key-2",
      "X-Session-Token": "live-session-3",
      "X-Client-Secret": "live-secret-4",
      Cookie: "sid=live-cookie-5",
    };
    const ep = await endpoint("/credentials", { headers: { ...credentials, "X-Tenant": "acme" } });
    const secret = (await sys.request("GET", `/v3/endpoints/${ep}/secret`)).body.secret as string;
    const eventId = await send("invoice.paid", { n: 7 });
    await expect.poll(() => receiver.received("/credentials").length, { timeout: 10_000 }).toBe(1);
    const got = receiver.received("/credentials")[0]!;
    for (const [name, value] of Object.entries(credentials))
      expect(got.headers[name.toLowerCase()]).toBe(value);

    const attempt = async () => (await sys.request("GET", `/v3/attempts?endpoint=${ep}`)).body.data[0];
    await expect.poll(async () => (await attempt())?.status, { timeout: 10_000 }).toBe("succeeded");
    const { request } = (await sys.request("GET", `/v3/attempts/${(await attempt()).id}`)).body as {
      request: SentRequest;
    };
    for (const name of [...Object.keys(credentials), "X-Tenant"])
      expect(request.headers![name], name).toBe("[redacted]");
    expect(request.headers!["webhook-id"]).toBe(eventId);
    // Herald's signature is public proof, not a secret: kept, and it still verifies.
    expect(request.headers!["webhook-signature"]).toBe(got.headers["webhook-signature"]);
    expect(new Webhook(secret).verify(request.body, request.headers!)).toMatchObject({ data: { n: 7 } });
    // Not stored either: the attempt's row holds none of the values.
    const { rows } = await sys.gateway.deps.pool.query<{ headers: string }>(
      "SELECT request_headers::text AS headers FROM attempts WHERE endpoint_id = $1",
      [ep],
    );
    expect(rows).toHaveLength(1);
    for (const value of Object.values(credentials)) expect(rows[0]!.headers).not.toContain(value);
    // Nor in the endpoint's row, nor in what the API shows of it.
    const { rows: endpoints } = await sys.gateway.deps.pool.query<{ row: string }>(
      "SELECT row_to_json(e)::text AS row FROM endpoints e WHERE id = $1",
      [ep],
    );
    for (const value of [...Object.values(credentials), "acme"])
      expect(endpoints[0]!.row).not.toContain(value);
    const shown = (await sys.request("GET", `/v3/endpoints/${ep}`)).body.headers;
    expect(shown).toEqual(
      Object.fromEntries([...Object.keys(credentials), "X-Tenant"].map((n) => [n, "[redacted]"])),
    );
  });

  it("keeps a header's value when an update sends it back as [redacted], and changes the others", async () => {
    const ep = await endpoint("/kept", { headers: { "X-Api-Key": "first-key", "X-Tenant": "acme" } });
    const shown = (await sys.request("GET", `/v3/endpoints/${ep}`)).body.headers;
    const updated = await sys.request("POST", `/v3/endpoints/${ep}`, {
      json: { headers: { ...shown, "X-Tenant": "beta", "X-New": "n" } },
    });
    expect(updated.body.headers).toEqual({
      "X-Api-Key": "[redacted]",
      "X-Tenant": "[redacted]",
      "X-New": "[redacted]",
    });
    await send("invoice.paid", { n: 8 });
    await expect.poll(() => receiver.received("/kept").length, { timeout: 10_000 }).toBe(1);
    const got = receiver.received("/kept")[0]!.headers;
    expect([got["x-api-key"], got["x-tenant"], got["x-new"]]).toEqual(["first-key", "beta", "n"]);
  });
});
