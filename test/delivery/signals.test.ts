import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { deadPort } from "../support/ports.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * The HTTP signals of the Standard Webhooks spec and the circuit breaker, end to end: a
 * Retry-After pauses every delivery of the endpoint, not only the one that got it; an
 * endpoint that stops answering is paused (its deliveries held, not failed), probed, and
 * resumed when it answers; a pause counts toward ENDPOINT_DISABLE_AFTER like failing does.
 */
type State = { state: string; reason: string | null; until: string | null; description: string };

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
const servers: Server[] = [];

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s,1s,1s,1s,1s", ENDPOINT_PROBE_AFTER: "1s" });
  receiver = await startReceiver();
  f = fixtures(sys, receiver);
  await setupApp(sys, ["signal.tick"]);
});
afterAll(async () => {
  await sys?.close();
  await receiver?.close();
  for (const s of servers) s.closeAllConnections();
});

async function stateOf(gw: TestSystem, endpointId: string): Promise<State> {
  return (await gw.request("GET", `/v3/endpoints/${endpointId}`)).body.delivery_state;
}

function listen(port: number): Promise<{ server: Server; ids: string[] }> {
  const ids: string[] = [];
  const server = createServer((req, res) => {
    ids.push(String(req.headers["webhook-id"]));
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve({ server, ids })));
}

describe("HTTP signals", () => {
  it("a 429 with Retry-After: 3 pauses all of the endpoint's deliveries for 3 s, then they go", async () => {
    receiver.on("/busy", (_req, n) => (n === 1 ? { status: 429, headers: { "retry-after": "3" } } : {}));
    const ep = await f.endpoint("/busy");
    const first = await f.send("signal.tick");
    await expect.poll(async () => (await stateOf(sys, ep)).state, { timeout: 10_000 }).toBe("paused");
    const paused = await stateOf(sys, ep);
    const firstAt = receiver.received("/busy")[0]!.at;
    expect(paused.reason).toBe("retry_after");
    expect(Math.abs(Date.parse(paused.until!) - (firstAt + 3000))).toBeLessThan(1000);
    expect(paused.description).toMatch(/Retry-After/);

    const others = [];
    for (let i = 0; i < 4; i++) others.push(await f.send("signal.tick"));
    for (const id of [first, ...others])
      await expect.poll(() => f.status(id, ep), { timeout: 15_000, interval: 200 }).toBe("succeeded");
    const got = receiver.received("/busy");
    // Nothing reached it before the 3 s were up: not the retry, not the other four.
    for (const r of got.slice(1)) expect(r.at - firstAt).toBeGreaterThanOrEqual(2900);
    // Each of the four made one attempt: waiting used no retry step.
    for (const id of others) expect((await f.deliveries(id))[0]!.attempts).toBe(1);
    expect((await stateOf(sys, ep)).state).toBe("active");
  });

  it("a 503 with Retry-After pauses the endpoint as a 429 does", async () => {
    receiver.on("/maintenance", (_req, n) =>
      n === 1 ? { status: 503, headers: { "retry-after": "2" } } : {},
    );
    const ep = await f.endpoint("/maintenance");
    const id = await f.send("signal.tick");
    await expect.poll(async () => (await stateOf(sys, ep)).reason, { timeout: 10_000 }).toBe("retry_after");
    expect((await stateOf(sys, ep)).state).toBe("paused");
    await expect.poll(() => f.status(id, ep), { timeout: 15_000, interval: 200 }).toBe("succeeded");
    const [first, retry] = receiver.received("/maintenance");
    expect(retry!.at - first!.at).toBeGreaterThanOrEqual(1900);
  });

  it("a 502 without Retry-After slows the endpoint down: throttled, its deliveries still succeed", async () => {
    receiver.on("/overloaded", (_req, n) => (n === 1 ? { status: 502, body: "bad gateway" } : {}));
    const ep = await f.endpoint("/overloaded");
    const id = await f.send("signal.tick");
    await expect.poll(async () => (await stateOf(sys, ep)).reason, { timeout: 10_000 }).toBe("slow_down");
    const slowed = await stateOf(sys, ep);
    expect(slowed.state).toBe("throttled");
    // ENDPOINT_SLOW_DOWN's default, 60 s, from the 502.
    const firstAt = receiver.received("/overloaded")[0]!.at;
    expect(Math.abs(Date.parse(slowed.until!) - (firstAt + 60_000))).toBeLessThan(2000);
    expect(slowed.description).toMatch(/at most \d+ attempts? in flight/);
    // Slowed, not stopped: its retry and a new event go through.
    const next = await f.send("signal.tick");
    for (const e of [id, next])
      await expect.poll(() => f.status(e, ep), { timeout: 15_000, interval: 200 }).toBe("succeeded");
    const changes = await sys.dispatchers[0]!.deps.metrics.flowChanges.get();
    expect(changes.values).toContainEqual(
      expect.objectContaining({ labels: { change: "slowed", reason: "slow_down" } }),
    );
  });

  it("pauses an endpoint that stops answering, probes it, and resumes when it is back", async () => {
    const port = await deadPort();
    const res = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://127.0.0.1:${port}/back` },
    });
    const ep: string = res.body.id;
    const events = [];
    for (let i = 0; i < 6; i++) events.push(await f.send("signal.tick"));
    await expect
      .poll(async () => (await stateOf(sys, ep)).reason, { timeout: 10_000 })
      .toBe("not_responding");
    const paused = await stateOf(sys, ep);
    expect(paused.state).toBe("paused");
    expect(paused.description).toMatch(/Not responding/);
    // Held, not failed.
    for (const id of events) expect(await f.status(id, ep)).not.toBe("failed");
    const changes = await sys.dispatchers[0]!.deps.metrics.flowChanges.get();
    expect(changes.values).toContainEqual(
      expect.objectContaining({ labels: { change: "paused", reason: "not_responding" } }),
    );

    const back = await listen(port);
    for (const id of events)
      await expect.poll(() => f.status(id, ep), { timeout: 20_000, interval: 200 }).toBe("succeeded");
    expect(new Set(back.ids)).toEqual(new Set(events));
    expect((await stateOf(sys, ep)).state).toBe("active");
  });
});

describe("a pause", () => {
  let quick: TestSystem;
  beforeAll(async () => {
    quick = await startSystem({
      RETRY_SCHEDULE: "1s,1s,1s,1s,1s,1s,1s,1s",
      ENDPOINT_PROBE_AFTER: "500ms",
      ENDPOINT_PROBE_AFTER_MAX: "500ms",
      ENDPOINT_DISABLE_AFTER: "3s",
    });
    await setupApp(quick, ["signal.tick"]);
  });
  afterAll(() => quick?.close());

  it("counts toward ENDPOINT_DISABLE_AFTER: a dead endpoint is disabled and its held deliveries end", async () => {
    const port = await deadPort();
    const res = await quick.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://127.0.0.1:${port}/gone-for-good` },
    });
    const ep: string = res.body.id;
    const q = fixtures(quick, receiver);
    const events = [];
    for (let i = 0; i < 8; i++) events.push(await q.send("signal.tick"));
    await expect.poll(async () => (await stateOf(quick, ep)).state, { timeout: 20_000 }).toBe("disabled");
    for (const id of events)
      await expect.poll(() => q.status(id, ep), { timeout: 10_000, interval: 200 }).toBe("failed");
    // Held deliveries ended without being attempted again.
    const total = events.length;
    const attempts = (await q.attempts(`endpoint=${ep}`)).length;
    expect(attempts).toBeLessThan(total * 3);
  });
});
