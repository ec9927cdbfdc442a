import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AttemptView, type DeliveryView, setupApp } from "../support/fixtures.ts";
import { deadPort } from "../support/ports.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

type Attempt = AttemptView & { url: string; response_body: string | null; duration_ms: number | null };
type Delivery = DeliveryView;

const TYPES = {
  timeout: "failure.timeout",
  refused: "failure.refused",
  dns: "failure.dns",
  server: "failure.server_error",
  notFound: "failure.not_found",
  gone: "failure.gone",
  created: "success.created",
  noContent: "success.no_content",
  rateLimited: "failure.rate_limited",
};

let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  sys = await startSystem({ ATTEMPT_TIMEOUT: "500ms", RETRY_SCHEDULE: "1s" });
  receiver = await startReceiver();
  await setupApp(sys, Object.values(TYPES));
});
afterAll(async () => {
  await sys?.close();
  await receiver?.close();
});

async function createEndpoint(url: string, type: string): Promise<string> {
  const res = await sys.request("POST", "/v3/endpoints", { json: { app: "acme", url, event_types: [type] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function send(type: string): Promise<string> {
  const res = await sys.request("POST", "/v3/events", { json: { app: "acme", type, data: { n: 1 } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function delivery(eventId: string, endpointId: string): Promise<Delivery | undefined> {
  const res = await sys.request("GET", `/v3/events/${eventId}`);
  return (res.body.deliveries as Delivery[]).find((d) => d.endpoint === endpointId);
}

/** The attempts of one delivery, first attempt first. */
async function attempts(eventId: string, endpointId: string): Promise<Attempt[]> {
  const res = await sys.request("GET", `/v3/attempts?limit=100&event=${eventId}&endpoint=${endpointId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as Attempt[]).sort((a, b) => a.attempt_number - b.attempt_number);
}

/** Sends an event to one new endpoint and waits for its delivery to reach `status`. */
async function deliverTo(url: string, type: string, status: "failed" | "succeeded") {
  const ep = await createEndpoint(url, type);
  const eventId = await send(type);
  await expect
    .poll(async () => (await delivery(eventId, ep))?.status, { timeout: 20_000, interval: 200 })
    .toBe(status);
  return { delivery: (await delivery(eventId, ep))!, attempts: await attempts(eventId, ep) };
}

function expectDuration(a: Attempt): void {
  expect(Number.isInteger(a.duration_ms), `duration_ms ${a.duration_ms}`).toBe(true);
  expect(a.duration_ms).toBeGreaterThanOrEqual(0);
}

/** A failed delivery after RETRY_SCHEDULE=1s: two attempts, both failed with `error`. */
function expectFailedTwice(result: Awaited<ReturnType<typeof deliverTo>>, error: string): void {
  expect(result.delivery.status).toBe("failed");
  expect(result.delivery.attempts).toBe(2);
  expect(result.delivery.next_attempt_at).toBeNull();
  expect(result.attempts.map((a) => a.attempt_number)).toEqual([1, 2]);
  for (const a of result.attempts) {
    expect(a.status).toBe("failed");
    expect(a.error).toBe(error);
    expectDuration(a);
  }
}

describe("failure kinds", () => {
  it("timeout: the receiver answers after ATTEMPT_TIMEOUT", async () => {
    receiver.on("/slow", { delayMs: 2000 });
    const result = await deliverTo(`${receiver.url}/slow`, TYPES.timeout, "failed");
    expectFailedTwice(result, "timeout");
    for (const a of result.attempts) {
      expect(a.response_status).toBeNull();
      expect(a.response_body).toBeNull();
      // Given up at the 500 ms timeout, not after the receiver's 2 s.
      expect(a.duration_ms).toBeGreaterThanOrEqual(450);
      expect(a.duration_ms).toBeLessThan(1900);
    }
    expect(receiver.received("/slow")).toHaveLength(2);
  });

  it("connection_error: nothing listens on the port", async () => {
    const port = await deadPort();
    const result = await deliverTo(`http://127.0.0.1:${port}/hook`, TYPES.refused, "failed");
    expectFailedTwice(result, "connection_error");
    for (const a of result.attempts) {
      expect(a.response_status).toBeNull();
      expect(a.response_body).toBeNull();
    }
  });

  it("dns_error: the hostname does not resolve", async () => {
    const result = await deliverTo("http://does-not-exist.invalid/", TYPES.dns, "failed");
    expectFailedTwice(result, "dns_error");
    for (const a of result.attempts) {
      expect(a.response_status).toBeNull();
      expect(a.response_body).toBeNull();
    }
  });

  it("http_error 500 keeps exactly the first 4096 bytes of the response body", async () => {
    // 10 KB of ASCII that never repeats a 16-byte line, so a wrong offset would show.
    const body = Array.from({ length: 640 }, (_, i) => `line ${String(i).padStart(10, "0")}\n`).join("");
    expect(body.length).toBe(10_240);
    receiver.on("/server-error", { status: 500, headers: { "content-type": "text/plain" }, body });
    const result = await deliverTo(`${receiver.url}/server-error`, TYPES.server, "failed");
    expectFailedTwice(result, "http_error");
    for (const a of result.attempts) {
      expect(a.response_status).toBe(500);
      expect(a.response_body).toHaveLength(4096);
      expect(a.response_body).toBe(body.slice(0, 4096));
    }
    expect(receiver.received("/server-error")).toHaveLength(2);
  });

  it("http_error 404", async () => {
    receiver.on("/status-404", { status: 404, body: "status 404" });
    const result = await deliverTo(`${receiver.url}/status-404`, TYPES.notFound, "failed");
    expectFailedTwice(result, "http_error");
    for (const a of result.attempts) {
      expect(a.response_status).toBe(404);
      expect(a.response_body).toBe("status 404");
    }
    expect(receiver.received("/status-404")).toHaveLength(2);
  });

  it("http_error 410: no retry, and the endpoint is disabled (Standard Webhooks)", async () => {
    receiver.on("/status-410", { status: 410, body: "gone" });
    const result = await deliverTo(`${receiver.url}/status-410`, TYPES.gone, "failed");
    expect(result.delivery.attempts).toBe(1);
    expect(result.attempts.map((a) => [a.status, a.error, a.response_status])).toEqual([
      ["failed", "http_error", 410],
    ]);
    const endpoint = await sys.request("GET", `/v3/endpoints/${result.attempts[0]!.endpoint}`);
    expect(endpoint.body.disabled).toBe(true);
    expect(endpoint.body.disabled_reason).toMatch(/answered 410 Gone/);
    expect(receiver.received("/status-410")).toHaveLength(1);
  });

  for (const [status, type] of [
    [201, TYPES.created],
    [204, TYPES.noContent],
  ] as const) {
    it(`a ${status} is a success`, async () => {
      receiver.on(`/status-${status}`, { status, body: status === 204 ? "" : "created" });
      const result = await deliverTo(`${receiver.url}/status-${status}`, type, "succeeded");
      expect(result.delivery.attempts).toBe(1);
      expect(result.delivery.next_attempt_at).toBeNull();
      expect(result.attempts).toHaveLength(1);
      const [a] = result.attempts;
      expect(a!.status).toBe("succeeded");
      expect(a!.error).toBeNull();
      expect(a!.response_status).toBe(status);
      expect(a!.response_body).toBe(status === 204 ? "" : "created");
      expectDuration(a!);
      expect(receiver.received(`/status-${status}`)).toHaveLength(1);
    });
  }

  it("a 429 with Retry-After is an http_error and is retried", async () => {
    receiver.on("/rate-limited", { status: 429, headers: { "retry-after": "1" }, body: "slow down" });
    const result = await deliverTo(`${receiver.url}/rate-limited`, TYPES.rateLimited, "failed");
    expectFailedTwice(result, "http_error");
    for (const a of result.attempts) {
      expect(a.response_status).toBe(429);
      expect(a.response_body).toBe("slow down");
    }
    const got = receiver.received("/rate-limited");
    expect(got).toHaveLength(2);
    // Retried after about a second (Retry-After: 1, within the 1 s step).
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(900);
    expect(got[1]!.headers["webhook-id"]).toBe(got[0]!.headers["webhook-id"]);
  });
});
