import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AMQP_URL } from "../support/env.ts";
import type { Response } from "../support/gateway.ts";
import { createQueuePrefix, createTestDatabase } from "../support/isolation.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp.ts";
import { freePort, type ServiceProcess, spawnService, stopAll, waitForOutput } from "../support/processes.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";

/**
 * One event is one trace: the three services run as their own processes, each with the real
 * OpenTelemetry SDK exporting OTLP/JSON to a receiver this test runs.
 */
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

let otlp: OtlpReceiver;
let receiver: Receiver;
let services: ServiceProcess[] = [];
let cleanup: () => Promise<void>;
let base: string;
let key: string;
let encryptionKey: string;
let env: Record<string, string>;

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Response["body"] };
}

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  receiver = await startReceiver();
  const db = await createTestDatabase();
  const queues = createQueuePrefix();
  const port = await freePort();
  key = `hk_${randomBytes(32).toString("base64url")}`;
  encryptionKey = randomBytes(32).toString("base64");
  base = `http://127.0.0.1:${port}`;
  env = {
    DATABASE_URL: db.url,
    AMQP_URL,
    AMQP_PREFIX: queues.prefix,
    ENCRYPTION_KEY: encryptionKey,
    RETRY_SCHEDULE: "1s",
    ALLOW_PRIVATE_DESTINATIONS: "true",
    HEALTH_PORT: "0",
    HEALTH_HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
  services = [
    spawnService("api-gateway", "api-gateway", {
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      BOOTSTRAP_API_KEY: key,
    }),
    spawnService("dispatcher", "dispatcher", env),
    spawnService("sender", "sender", env),
  ];
  await waitForOutput(services[0]!, "api-gateway listening");
  await waitForOutput(services[1]!, "dispatcher consuming");
  await waitForOutput(services[2]!, "sender consuming");
  cleanup = async () => {
    await queues.remove([1000]);
    await db.drop();
  };
}, 60_000);

afterAll(async () => {
  await stopAll(services);
  await cleanup?.();
  await receiver?.close();
  await otlp?.close();
}, 60_000);

function parentOf(span: ReceivedSpan, all: ReceivedSpan[]): ReceivedSpan | undefined {
  return all.find((s) => s.spanId === span.parentSpanId);
}

describe("one trace per event", () => {
  it("links the request, fan-out, each attempt, its HTTP call, the retry and the results", async () => {
    await api("POST", "/v3/apps", { uid: "acme", name: "Acme" });
    await api("POST", "/v3/event-types", { name: "invoice.paid" });
    receiver.on("/flaky", (_req, n) => ({ status: n === 1 ? 500 : 200 }));
    // A Slack-style URL: the token rides in the path, another in the query.
    const pathToken = "xoxb7Qm2LrT8sWz4fJ9";
    const okUrl = `${receiver.url}/services/T0001/B0001/${pathToken}?token=query_secret_1`;
    const ok = (await api("POST", "/v3/endpoints", { app: "acme", url: okUrl })).body.id;
    const flaky = (await api("POST", "/v3/endpoints", { app: "acme", url: `${receiver.url}/flaky` })).body.id;
    const secrets = [
      (await api("GET", `/v3/endpoints/${ok}/secret`)).body.secret,
      (await api("GET", `/v3/endpoints/${flaky}/secret`)).body.secret,
    ];
    const data = { invoice: "in_secret_payload_value" };
    const eventId = (await api("POST", "/v3/events", { app: "acme", type: "invoice.paid", data })).body
      .id as string;

    await expect
      .poll(
        async () =>
          (await api("GET", `/v3/events/${eventId}`)).body.deliveries.map(
            (d: { status: string }) => d.status,
          ),
        { timeout: 20_000 },
      )
      .toEqual(["succeeded", "succeeded"]);
    const attempts = (await api("GET", `/v3/attempts?event=${eventId}`)).body.data as {
      trace_id: string;
      status: string;
    }[];
    expect(attempts.map((a) => a.status).sort()).toEqual(["failed", "succeeded", "succeeded"]);

    // Wait until the three HTTP calls and the three results are exported.
    const ofEvent = () => otlp.spans.filter((s) => s.attributes["herald.event_id"] === eventId);
    await expect.poll(() => ofEvent().filter((s) => s.kind === CLIENT).length, { timeout: 20_000 }).toBe(3);
    await expect
      .poll(
        () =>
          otlp.spans.filter(
            (s) => s.name === "process attempt.completed.v1" && s.attributes["herald.event_id"] === eventId,
          ).length,
        {
          timeout: 20_000,
        },
      )
      .toBe(3);

    const traceId = ofEvent()[0]!.traceId;
    const trace = otlp.spans.filter((s) => s.traceId === traceId);
    // Every span about this event, from all three services, is in this one trace.
    expect(new Set(ofEvent().map((s) => s.traceId))).toEqual(new Set([traceId]));
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(["api-gateway", "dispatcher", "sender"]));
    // The attempts record the trace id.
    expect(new Set(attempts.map((a) => a.trace_id))).toEqual(new Set([traceId]));

    // Each outgoing call walks up: sender → dispatcher → api-gateway, to the POST /v3/events span.
    const root = trace.find((s) => s.kind === SERVER && s.name === "POST /v3/events")!;
    expect(root).toBeDefined();
    expect(root.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v3/events",
      "http.response.status_code": 201,
    });
    for (const call of trace.filter((s) => s.kind === CLIENT)) {
      const chain: ReceivedSpan[] = [];
      for (let span: ReceivedSpan | undefined = call; span; span = parentOf(span, trace)) chain.push(span);
      expect(chain.at(-1)).toBe(root);
      const services = chain.map((s) => s.service).filter((s, i, all) => s !== all[i - 1]);
      // A retry hangs under the failed attempt that caused it: sender → dispatcher twice over.
      expect(services).toEqual(
        call.attributes["herald.attempt_number"] === 1
          ? ["sender", "dispatcher", "api-gateway"]
          : ["sender", "dispatcher", "sender", "dispatcher", "api-gateway"],
      );
      expect(chain.some((s) => s.kind === CONSUMER && s.service === "sender")).toBe(true);
      expect(chain.some((s) => s.kind === PRODUCER && s.service === "api-gateway")).toBe(true);
      expect(call.attributes).toMatchObject({ "http.request.method": "POST", "server.address": "127.0.0.1" });
      expect(call.attributes["url.full"]).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/(services\/T0001\/B0001\/\{redacted\}|flaky)$/,
      );
      expect([200, 500]).toContain(call.attributes["http.response.status_code"]);
      expect(call.attributes["herald.endpoint_id"]).toMatch(/^ep_/);
      expect(call.attributes["herald.attempt_number"]).toBeGreaterThanOrEqual(1);
    }
    // The retry, a second later, is in the same trace: reached through the delay queue.
    const retry = trace.filter((s) => s.kind === CLIENT && s.attributes["herald.attempt_number"] === 2);
    expect(retry).toHaveLength(1);
    expect(trace.some((s) => s.name === "process retry.due.v1")).toBe(true);
    expect(trace.some((s) => s.attributes["herald.delivery_status"] === "retrying")).toBe(true);

    // No secret, signature or payload is an attribute.
    const values = JSON.stringify(otlp.spans.map((s) => s.attributes));
    for (const secret of [
      ...secrets,
      key,
      encryptionKey,
      "in_secret_payload_value",
      "webhook-signature",
      pathToken,
      "query_secret_1",
    ]) {
      expect(values).not.toContain(secret);
    }

    // Log lines about a delivery carry its trace id, event and endpoint.
    const senderLines = services[2]!
      .output()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = senderLines.find((l) => l.event === eventId && l.msg === "attempt succeeded");
    expect(line).toMatchObject({
      service: "sender",
      trace_id: traceId,
      endpoint: expect.stringMatching(/^ep_/),
    });
    expect(line?.span_id).toMatch(/^[0-9a-f]{16}$/);
    const dispatcherLines = services[1]!
      .output()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(dispatcherLines.find((l) => l.event === eventId && l.msg === "delivery retrying")).toMatchObject({
      trace_id: traceId,
    });
    // And no log line of any service holds a secret or an API key.
    for (const service of services) {
      for (const secret of [...secrets, key, encryptionKey]) expect(service.output()).not.toContain(secret);
    }
  });

  it("exports OTLP as protobuf when OTEL_EXPORTER_OTLP_PROTOCOL says http/protobuf", async () => {
    const port = await freePort();
    const gateway = spawnService("api-gateway", "gateway-protobuf", {
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    });
    services.push(gateway);
    await expect.poll(() => gateway.output(), { timeout: 30_000 }).toContain("api-gateway listening");
    await fetch(`http://127.0.0.1:${port}/healthz`);
    await expect.poll(() => otlp.protobufBatches, { timeout: 10_000 }).toBeGreaterThan(0);
  });
});
