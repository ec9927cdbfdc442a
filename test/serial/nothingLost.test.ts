import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { promisify } from "node:util";
import { delayTiers, parseSchedule } from "@herald/db/lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { deadPort } from "../support/ports.ts";
import { type ServiceProcess, spawnService, stopAll } from "../support/processes.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";

/**
 * Nothing lost: 1,000 events to three endpoints through 2 dispatchers and 3 senders, each its
 * own process, while a sender is SIGKILLed mid-attempt, a dispatcher is SIGKILLed mid-fan-out
 * and RabbitMQ itself is restarted. A fourth endpoint is down all that time: it is paused
 * (its deliveries held in PostgreSQL through the kills and the restart, not failed), probed,
 * and resumed when it comes back. Every delivery must end `succeeded` and every receiver
 * must have seen every event at least once. Runs alone (`npm test` runs it after the rest):
 * restarting the broker would disturb other test files.
 */
const EVENTS = 1000;
const PATHS = ["/a", "/b", "/c"];
const SCHEDULE = "1s,2s,3s,5s,10s,10s,10s";

let gw: TestGateway;
let receiver: Receiver;
const services: ServiceProcess[] = [];
let env: Record<string, string>;
/** The endpoint that is down until the broker is back, and what it got once up. */
let downPort: number;
let down: Server | null = null;
let downEndpoint: string;
const downSeen: string[] = [];

function start(kind: "dispatcher" | "sender"): ServiceProcess {
  const service = spawnService(kind, `${kind}-${services.length}`, env);
  services.push(service);
  return service;
}

const execFileAsync = promisify(execFile);
/**
 * Without blocking this process: the gateway runs in it, so it takes events while the broker
 * is down; a blocked event loop took none, and let a keep-alive socket close under the next
 * request (ECONNRESET).
 */
async function restartRabbitMq(): Promise<void> {
  await execFileAsync("rabbitmqctl", ["stop_app"]);
  await execFileAsync("rabbitmqctl", ["start_app"]);
}

beforeAll(async () => {
  gw = await startGateway(
    { RETRY_SCHEDULE: SCHEDULE, OUTBOX_RELAY_INTERVAL: "500ms", OUTBOX_RELAY_AFTER: "2s" },
    delayTiers(parseSchedule(SCHEDULE)!),
  );
  env = {
    ...gw.env,
    ALLOW_PRIVATE_DESTINATIONS: "true",
    HEALTH_PORT: "0",
    HEALTH_HOST: "127.0.0.1",
    ATTEMPT_TIMEOUT: "5s",
    SWEEP_INTERVAL: "1s",
    SWEEP_GRACE: "5s",
    ATTEMPT_DEADLINE: "30s",
    SENDER_CONCURRENCY: "16",
    ENDPOINT_PROBE_AFTER: "1s",
    ENDPOINT_PROBE_AFTER_MAX: "2s",
  };
  receiver = await startReceiver();
  // Small random delays keep attempts in flight when a sender is killed.
  for (const path of PATHS)
    receiver.on(path, () => ({ status: 200, delayMs: Math.floor(Math.random() * 20) }));
  await setupApp(gw, ["load.tested"]);
  const f = fixtures(gw, receiver);
  for (const path of PATHS) await f.endpoint(path);
  downPort = await deadPort();
  const res = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: `http://127.0.0.1:${downPort}/down` },
  });
  expect(res.status).toBe(201);
  downEndpoint = res.body.id;
  for (let i = 0; i < 2; i++) start("dispatcher");
  for (let i = 0; i < 3; i++) start("sender");
}, 60_000);

afterAll(async () => {
  await stopAll(services);
  await gw?.close();
  await receiver?.close();
  down?.closeAllConnections();
  down?.close();
}, 60_000);

describe("nothing lost", () => {
  it("delivers every event to every endpoint through kills and a broker restart", async () => {
    const prisma = gw.gateway.deps.prisma;
    const sent: string[] = [];
    const arrivals = () => receiver.requests.length;

    let next = 0;
    const sendAll = Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < EVENTS) {
          next++;
          for (;;) {
            const res = await gw.request("POST", "/v3/events", {
              json: { app: "acme", type: "load.tested", data: { n: next } },
            });
            if (res.status === 201) {
              sent.push(res.body.id);
              break;
            }
            // The gateway itself never refuses an event for the broker's sake; anything else is a bug.
            throw new Error(`event refused: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
      }),
    );

    // A dispatcher dies in the middle of fanning out.
    await expect.poll(() => sent.length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(150);
    services.find((s) => s.name.startsWith("dispatcher") && s.child.exitCode === null)!.child.kill("SIGKILL");
    start("dispatcher");

    // A sender dies with attempts in flight.
    await expect.poll(arrivals, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(600);
    services.find((s) => s.name.startsWith("sender") && s.child.exitCode === null)!.child.kill("SIGKILL");
    start("sender");

    // RabbitMQ goes down and comes back.
    await expect.poll(arrivals, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(1500);
    await restartRabbitMq();

    await sendAll;
    expect(sent).toHaveLength(EVENTS);

    // The fourth endpoint was paused, not failed, through all of it; now it comes back.
    const state = (await gw.request("GET", `/v3/endpoints/${downEndpoint}`)).body.delivery_state;
    expect(state).toMatchObject({ state: "paused", reason: "not_responding" });
    expect(await prisma.delivery.count({ where: { endpointId: downEndpoint, status: "failed" } })).toBe(0);
    down = createServer((req, res) => {
      downSeen.push(String(req.headers["webhook-id"]));
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((resolve) => down!.listen(downPort, "127.0.0.1", resolve));
    await expect
      .poll(() => prisma.delivery.count({ where: { status: "succeeded" } }), {
        timeout: 240_000,
        interval: 1000,
      })
      .toBe(EVENTS * (PATHS.length + 1));
    expect(await prisma.delivery.count()).toBe(EVENTS * (PATHS.length + 1));
    expect(
      [...new Set(sent)].filter((id) => !downSeen.includes(id)),
      "events the paused endpoint never saw",
    ).toEqual([]);

    const ids = new Set(sent);
    let duplicates = 0;
    for (const path of PATHS) {
      const seen = receiver.received(path).map((r) => String(r.headers["webhook-id"]));
      const unique = new Set(seen);
      expect(
        [...ids].filter((id) => !unique.has(id)),
        `events ${path} never saw`,
      ).toEqual([]);
      duplicates += seen.length - unique.size;
    }
    console.log(
      `nothing lost: ${EVENTS} events × ${PATHS.length + 1} endpoints (one paused until the end) = ${EVENTS * (PATHS.length + 1)} deliveries, all succeeded; ` +
        `${receiver.requests.length} requests arrived, ${duplicates} of them duplicates (at-least-once)`,
    );
  }, 400_000);
});
