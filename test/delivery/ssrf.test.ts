import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AttemptView, type DeliveryView, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

type Attempt = AttemptView & { url: string; response_body: string | null; duration_ms: number | null };
type Delivery = DeliveryView;

async function createEndpoint(sys: TestSystem, url: string, type: string): Promise<string> {
  const res = await sys.request("POST", "/v3/endpoints", {
    json: { app: "acme", url, event_types: [type] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function send(sys: TestSystem, type: string): Promise<string> {
  const res = await sys.request("POST", "/v3/events", { json: { app: "acme", type, data: { n: 1 } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function delivery(sys: TestSystem, eventId: string, endpointId: string): Promise<Delivery | undefined> {
  const res = await sys.request("GET", `/v3/events/${eventId}`);
  return (res.body.deliveries as Delivery[]).find((d) => d.endpoint === endpointId);
}

/** The attempts of one delivery, first attempt first. */
async function attempts(sys: TestSystem, eventId: string, endpointId: string): Promise<Attempt[]> {
  const res = await sys.request("GET", `/v3/attempts?limit=100&event=${eventId}&endpoint=${endpointId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as Attempt[]).sort((a, b) => a.attempt_number - b.attempt_number);
}

/** Waits for the delivery to end `failed` and returns it with its attempts. */
async function failedDelivery(sys: TestSystem, eventId: string, endpointId: string) {
  await expect
    .poll(async () => (await delivery(sys, eventId, endpointId))?.status, { timeout: 20_000, interval: 200 })
    .toBe("failed");
  return {
    delivery: (await delivery(sys, eventId, endpointId))!,
    attempts: await attempts(sys, eventId, endpointId),
  };
}

describe("SSRF guard (ALLOW_PRIVATE_DESTINATIONS=false)", () => {
  let sys: TestSystem;
  let receiver: Receiver;
  /** A second receiver on the IPv6 loopback, so an attempt to [::1] would be seen. */
  let v6: Server;
  let v6Port: number;
  const v6Requests: string[] = [];

  beforeAll(async () => {
    // ATTEMPT_TIMEOUT bounds how long a wrongly attempted connection could hang, so a guard
    // failure shows up as a wrong error kind rather than as a test timeout.
    sys = await startSystem({
      ALLOW_PRIVATE_DESTINATIONS: "false",
      RETRY_SCHEDULE: "1s",
      ATTEMPT_TIMEOUT: "5s",
    });
    receiver = await startReceiver();
    v6 = createServer((req, res) => {
      v6Requests.push(req.url ?? "/");
      res.end("ok");
    });
    await new Promise<void>((resolve) => v6.listen(0, "::1", resolve));
    v6Port = (v6.address() as AddressInfo).port;
    await setupApp(sys, [
      "ssrf.loopback",
      "ssrf.localhost",
      "ssrf.ipv6",
      "ssrf.mapped",
      "ssrf.metadata",
      "ssrf.private",
    ]);
  });
  afterAll(async () => {
    await sys?.close();
    await receiver?.close();
    if (v6) {
      v6.closeAllConnections();
      await new Promise<void>((resolve) => v6.close(() => resolve()));
    }
  });

  const port = () => new URL(receiver.url).port;
  const cases: { name: string; type: string; url: () => string; quick: boolean }[] = [
    {
      name: "a literal loopback address",
      type: "ssrf.loopback",
      url: () => `http://127.0.0.1:${port()}/loopback`,
      quick: true,
    },
    {
      name: "a hostname that resolves to loopback",
      type: "ssrf.localhost",
      url: () => `http://localhost:${port()}/localhost`,
      quick: false,
    },
    {
      name: "the IPv6 loopback literal",
      type: "ssrf.ipv6",
      url: () => `http://[::1]:${v6Port}/ipv6`,
      quick: true,
    },
    {
      name: "an IPv4-mapped IPv6 loopback literal",
      type: "ssrf.mapped",
      url: () => `http://[::ffff:127.0.0.1]:${port()}/mapped`,
      quick: true,
    },
    {
      name: "the cloud metadata address, without any connection",
      type: "ssrf.metadata",
      url: () => "http://169.254.169.254/latest/meta-data",
      quick: true,
    },
    {
      name: "a private (RFC 1918) address, without any connection",
      type: "ssrf.private",
      url: () => "http://10.0.0.1/hook",
      quick: true,
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.name} with blocked_destination on every attempt`, async () => {
      const ep = await createEndpoint(sys, c.url(), c.type);
      const eventId = await send(sys, c.type);
      const result = await failedDelivery(sys, eventId, ep);

      expect(result.delivery.attempts).toBe(2);
      expect(result.delivery.next_attempt_at).toBeNull();
      expect(result.attempts.map((a) => a.attempt_number)).toEqual([1, 2]);
      for (const a of result.attempts) {
        expect(a.status).toBe("failed");
        expect(a.error).toBe("blocked_destination");
        expect(a.response_status).toBeNull();
        expect(a.response_body).toBeNull();
        expect(a.url).toBe(new URL(c.url()).toString());
        expect(Number.isInteger(a.duration_ms)).toBe(true);
        expect(a.duration_ms).toBeGreaterThanOrEqual(0);
        // Refused before connecting: nowhere near the 5 s attempt timeout.
        if (c.quick) expect(a.duration_ms).toBeLessThan(1000);
      }
      expect(receiver.requests).toHaveLength(0);
      expect(v6Requests).toHaveLength(0);
    });
  }
});

describe("redirects are not followed", () => {
  let sys: TestSystem;
  let receiver: Receiver;

  beforeAll(async () => {
    // The receiver is local, so private destinations stay allowed here.
    sys = await startSystem({ RETRY_SCHEDULE: "1s" });
    receiver = await startReceiver();
    await setupApp(sys, ["redirect.r301", "redirect.r302", "redirect.r307"]);
  });
  afterAll(async () => {
    await sys?.close();
    await receiver?.close();
  });

  for (const status of [302, 301, 307]) {
    it(`treats a ${status} as a failed attempt (http_error) and never requests its Location`, async () => {
      const type = `redirect.r${status}`;
      receiver.on(`/redirect-${status}`, {
        status,
        headers: { location: `${receiver.url}/internal-${status}` },
        body: "moved",
      });
      const ep = await createEndpoint(sys, `${receiver.url}/redirect-${status}`, type);
      const eventId = await send(sys, type);
      const result = await failedDelivery(sys, eventId, ep);

      expect(result.delivery.attempts).toBe(2);
      expect(result.delivery.next_attempt_at).toBeNull();
      expect(result.attempts).toHaveLength(2);
      for (const a of result.attempts) {
        expect(a.status).toBe("failed");
        expect(a.error).toBe("http_error");
        expect(a.response_status).toBe(status);
        expect(a.response_body).toBe("moved");
        expect(Number.isInteger(a.duration_ms)).toBe(true);
        expect(a.duration_ms).toBeGreaterThanOrEqual(0);
      }
      expect(receiver.received(`/redirect-${status}`)).toHaveLength(2);
      expect(receiver.received(`/internal-${status}`)).toHaveLength(0);
    });
  }
});
