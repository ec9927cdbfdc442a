import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  receiver = await startReceiver();
  await setupApp(sys, ["metric.moved"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

type Sample = { name: string; labels: Record<string, string>; value: number };

/** A strict reader of the Prometheus text format: every line must be a comment or a sample. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    if (!m) throw new Error(`not Prometheus text: ${line}`);
    const labels = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parse(await res.text());
}

const portOf = (server: Server | null) => (server!.address() as AddressInfo).port;
const sum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);

describe("/metrics", () => {
  it("parses as Prometheus text on every service, and the counters move with deliveries", async () => {
    const gatewayUrl = `${sys.url}/metrics`;
    const dispatcherUrl = `http://127.0.0.1:${portOf(sys.dispatchers[0]!.healthServer())}/metrics`;
    const senderUrl = `http://127.0.0.1:${portOf(sys.senders[0]!.healthServer())}/metrics`;
    const before = {
      gateway: await scrape(gatewayUrl),
      dispatcher: await scrape(dispatcherUrl),
      sender: await scrape(senderUrl),
    };

    receiver.on("/flaky", (_req, n) => ({ status: n === 1 ? 503 : 200 }));
    const ok = await f.endpoint("/ok");
    const flaky = await f.endpoint("/flaky");
    const events = [await f.send("metric.moved"), await f.send("metric.moved")];
    for (const eventId of events) {
      for (const ep of [ok, flaky])
        await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    }

    const after = {
      gateway: await scrape(gatewayUrl),
      dispatcher: await scrape(dispatcherUrl),
      sender: await scrape(senderUrl),
    };
    const moved = (service: keyof typeof after, name: string, labels?: Record<string, string>) =>
      sum(after[service], name, labels) - sum(before[service], name, labels);

    // Sender: 4 successes and the flaky endpoint's one 503, with their durations.
    expect(moved("sender", "herald_attempts_total", { outcome: "succeeded", error: "none" })).toBe(4);
    expect(moved("sender", "herald_attempts_total", { outcome: "failed", error: "http_error" })).toBe(1);
    expect(moved("sender", "herald_attempt_duration_seconds_count")).toBe(5);
    expect(
      after.sender.some(
        (s) => s.name === "herald_queue_messages_ready" && s.labels.queue?.endsWith(".sender.attempts"),
      ),
    ).toBe(true);

    // Dispatcher: deliveries by status, the retry, and the delay to first success.
    expect(moved("dispatcher", "herald_deliveries_total", { status: "pending" })).toBe(4);
    expect(moved("dispatcher", "herald_deliveries_total", { status: "succeeded" })).toBe(4);
    expect(moved("dispatcher", "herald_deliveries_total", { status: "retrying" })).toBe(1);
    expect(moved("dispatcher", "herald_retries_scheduled_total")).toBe(1);
    expect(moved("dispatcher", "herald_delivery_delay_seconds_count")).toBe(4);
    const queues = after.dispatcher
      .filter((s) => s.name === "herald_queue_messages_ready")
      .map((s) => s.labels.queue);
    expect(queues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\.dispatcher\.events$/),
        expect.stringMatching(/\.dispatcher\.results$/),
      ]),
    );

    // Gateway: requests by route and status, and the outbox backlog.
    expect(
      moved("gateway", "herald_http_requests_total", { route: "/v3/events", method: "POST", status: "201" }),
    ).toBe(2);
    expect(
      moved("gateway", "herald_http_requests_total", {
        route: "/v3/endpoints",
        method: "POST",
        status: "201",
      }),
    ).toBe(2);
    expect(after.gateway.find((s) => s.name === "herald_outbox_backlog")).toBeDefined();
    // The event loop's delay, for an alert on the next stall, and the schema workers' work.
    const lag = after.gateway.find((s) => s.name === "nodejs_eventloop_lag_max_seconds");
    expect(lag?.value).toBeGreaterThanOrEqual(0);
    expect(
      after.gateway.some((s) => s.name === "herald_schema_work" && s.labels.kind === "validations"),
    ).toBe(true);
    expect(after.gateway.find((s) => s.name === "process_resident_memory_bytes")?.value).toBeGreaterThan(0);
  });
});
