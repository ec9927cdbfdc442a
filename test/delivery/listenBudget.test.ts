import SERVICE_NODE_FLAGS from "@herald/runtime/service-node-flags.json" with { type: "json" };
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AttemptView, fixtures, setupApp } from "../support/fixtures.ts";
import { type ListenClient, openListenPatiently, requestsOf } from "../support/listenSocket.ts";
import { freePort, runNode, type ServiceProcess, stopAll, waitForOutput } from "../support/processes.ts";
import { startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * `herald listen` clients that read their requests and never answer cannot take a gateway's
 * memory: it holds at most 2 MiB of unanswered requests a socket and 32 MiB in all (budget.ts);
 * past that, an attempt fails at once as a `timeout`. The gateway holding the sockets runs as
 * its own process with the heap cap every service runs with (service-node-flags.json).
 */
const SOCKET_BUDGET = 2 * 1024 * 1024;
const GATEWAY_BUDGET = 32 * 1024 * 1024;
const SOCKETS = 20;
const EVENTS = 6;
const TIMEOUT_MS = 60_000;
/** What a frame carries besides the request as relayed (its type, id and timeout). */
const FRAME_SLACK = 1024;

let sys: TestSystem;
let f: ReturnType<typeof fixtures>;
let holder: ServiceProcess;
let holderUrl: string;

beforeAll(async () => {
  sys = await startSystem(
    {
      LISTEN_MAX_PER_ACCOUNT: String(SOCKETS),
      // Far longer than the flood takes: no request expires (giving its bytes back) meanwhile.
      ATTEMPT_TIMEOUT: `${TIMEOUT_MS}ms`,
      // One attempt a delivery while the test runs, and no endpoint paused for its timeouts.
      RETRY_SCHEDULE: "1h",
      ENDPOINT_BREAKER_AFTER: "100",
      // Every attempt of the flood in flight at once (all 1 MB, on the senders' lane of large
      // messages): the gateway's budget, not the senders', is what this holds to.
      SENDER_LARGE_CONCURRENCY: String(SOCKETS * EVENTS),
    },
    { dispatchers: 1, senders: 1 },
  );
  f = fixtures(sys, await startReceiver());
  await setupApp(sys, ["big.thing", "small.thing"]);
  const port = await freePort();
  holderUrl = `http://127.0.0.1:${port}`;
  holder = {
    name: "listen gateway",
    ...runNode([...SERVICE_NODE_FLAGS, "--import", "tsx", "services/api-gateway/src/main.ts"], {
      cwd: `${import.meta.dirname}/../..`,
      env: { ...process.env, ...sys.env, PORT: String(port), LOG_LEVEL: "info" },
    }),
  };
  await waitForOutput(holder, "api-gateway listening");
}, 90_000);
afterAll(async () => {
  if (holder) await stopAll([holder]);
  await sys?.close();
});

const bytesOf = (c: ListenClient) => requestsOf(c).reduce((n, r) => n + r.bytes, 0);

describe("listen requests held by a gateway", () => {
  it("are bounded a socket and a gateway; past that the attempt fails at once as a timeout", async () => {
    const sockets: ListenClient[] = [];
    for (let i = 0; i < SOCKETS; i++) sockets.push(await openListenPatiently(holderUrl, "app=acme", sys.key));

    // 1 MB events, each to every socket: 120 MB asked of a gateway whose heap is 160 MB.
    const events: string[] = [];
    for (let i = 0; i < EVENTS; i++) events.push(await f.send("big.thing", { blob: "x".repeat(1_000_000) }));
    const firstAttempts = async () =>
      (await Promise.all(events.map((e) => f.attempts(`event=${e}`))))
        .flat()
        // A failed one's retry waits an hour, pending.
        .filter((a) => a.attempt_number === 1) as (AttemptView & {
        duration_ms: number;
        response_status: number | null;
      })[];
    const sentDown = () => sockets.flatMap(requestsOf);
    // Each attempt went down a socket (unanswered, its timeout far off) or was refused.
    await expect
      .poll(async () => (await firstAttempts()).filter((a) => a.error).length + sentDown().length, {
        timeout: 90_000,
        interval: 1_000,
      })
      .toBe(SOCKETS * EVENTS);

    // Alive: not ended out of memory (the heap cap's abort is a signal, not an exit code).
    expect([holder.child.exitCode, holder.child.signalCode], holder.output().slice(-3000)).toEqual([
      null,
      null,
    ]);
    expect((await fetch(`${holderUrl}/healthz`)).status).toBe(200);
    // None answered nor expired yet: every request sent down is still held.
    const times = sentDown().map((r) => r.at);
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(TIMEOUT_MS);
    for (const s of sockets) {
      expect(s.closed).toBeNull();
      expect(bytesOf(s)).toBeLessThanOrEqual(SOCKET_BUDGET + FRAME_SLACK * EVENTS);
    }
    const sent = sentDown().length;
    expect(sockets.reduce((n, s) => n + bytesOf(s), 0)).toBeLessThanOrEqual(
      GATEWAY_BUDGET + FRAME_SLACK * sent,
    );
    // The others failed at once, as timeouts.
    const refused = (await firstAttempts()).filter((a) => a.error);
    expect(refused).toHaveLength(SOCKETS * EVENTS - sent);
    expect(new Set(refused.map((a) => a.error))).toEqual(new Set(["timeout"]));
    expect(refused.filter((a) => a.duration_ms >= TIMEOUT_MS / 2)).toEqual([]);

    // Answered, the held ones succeed and give their bytes back: nothing is held, and the next
    // event reaches every socket.
    for (const s of sockets) for (const r of requestsOf(s)) s.answer(r.id!, 200);
    await expect
      .poll(async () => (await firstAttempts()).filter((a) => a.response_status === 200).length, {
        timeout: 30_000,
      })
      .toBe(sent);
    const metric = async (series: string) =>
      new RegExp(`${series}[^}]*\\} (\\d+)`).exec(await (await fetch(`${holderUrl}/metrics`)).text())?.[1];
    await expect.poll(() => metric("herald_listen_held_bytes\\{"), { timeout: 10_000 }).toBe("0");
    // Both budgets were full at times: 2 of each socket's 1 MB requests, 32 of all 40.
    for (const budget of ["socket", "gateway"])
      expect(
        Number(await metric(`herald_listen_requests_refused_total\\{budget="${budget}"`)),
      ).toBeGreaterThan(0);
    const small = await f.send("small.thing", { n: 1 });
    const smallOf = (s: ListenClient) => requestsOf(s).find((r) => r.headers["webhook-id"] === small);
    await expect.poll(() => sockets.filter(smallOf).length, { timeout: 15_000 }).toBe(SOCKETS);
    for (const s of sockets) s.answer(smallOf(s)!.id!, 204);
    await expect
      .poll(async () => (await f.deliveries(small)).filter((d) => d.status === "succeeded").length, {
        timeout: 15_000,
      })
      .toBe(SOCKETS);
    for (const s of sockets) s.ws.close();
  }, 180_000);
});
