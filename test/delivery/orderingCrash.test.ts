import { delayTiers, parseSchedule } from "@herald/db/lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { type ServiceProcess, spawnService, stopAll } from "../support/processes.ts";
import { type Received, type Receiver, startReceiver } from "../support/receiver.ts";

/**
 * A fifo endpoint's order through crashes, the services as processes: the sender making the
 * first event's attempt is SIGKILLed mid-attempt (with the dispatcher), and a dispatcher is
 * SIGKILLed again halfway. The endpoint may get an attempt twice (at-least-once), but never an
 * event before every earlier one, and every delivery ends `succeeded`.
 */
const SCHEDULE = "1s,1s,1s";
const EVENTS = 8;
const POLL = { timeout: 60_000, interval: 100 };

let gw: TestGateway;
let receiver: Receiver;
let env: Record<string, string>;
const services: ServiceProcess[] = [];

function start(kind: "dispatcher" | "sender"): ServiceProcess {
  const service = spawnService(kind, `${kind}-${services.length}`, env);
  services.push(service);
  return service;
}
const running = (kind: string) => services.find((s) => s.name.startsWith(kind) && s.child.exitCode === null)!;

beforeAll(async () => {
  gw = await startGateway({ RETRY_SCHEDULE: SCHEDULE }, delayTiers(parseSchedule(SCHEDULE)!));
  env = {
    ...gw.env,
    ALLOW_PRIVATE_DESTINATIONS: "true",
    HEALTH_PORT: "0",
    HEALTH_HOST: "127.0.0.1",
    ATTEMPT_TIMEOUT: "5s",
    SWEEP_INTERVAL: "1s",
    SWEEP_GRACE: "2s",
    ATTEMPT_DEADLINE: "8s",
  };
  receiver = await startReceiver();
  await setupApp(gw, ["ledger.entry"]);
  start("dispatcher");
  start("sender");
}, 60_000);

afterAll(async () => {
  await stopAll(services);
  await gw?.close();
  await receiver?.close();
}, 60_000);

const numberOf = (r: Received) => (JSON.parse(r.body) as { data: { n: number } }).data.n;

describe("ordering: fifo through crashes", () => {
  it("keeps the order and loses nothing when a sender dies mid-attempt and dispatchers restart", async () => {
    // The first attempt of event 1 hangs until its sender is killed; the rest answer at once.
    receiver.on("/ordered", (r, n) =>
      n === 1 && numberOf(r) === 1 ? { delayMs: 120_000 } : { delayMs: 20 },
    );
    const f = fixtures(gw, receiver);
    const ep = await f.endpoint("/ordered", { ordering: "fifo" });
    const events: string[] = [];
    for (let n = 1; n <= EVENTS; n++) events.push(await f.send("ledger.entry", { n }));
    const seen = () => receiver.received("/ordered").map(numberOf);

    await expect.poll(seen, POLL).toEqual([1]);
    // Held behind it: the API says which event holds them.
    await expect
      .poll(
        async () => (await gw.request("GET", `/v3/endpoints/${ep}`)).body.delivery_state.held_behind?.event,
        POLL,
      )
      .toBe(events[0]);
    running("sender").child.kill("SIGKILL");
    running("dispatcher").child.kill("SIGKILL");
    start("dispatcher");
    start("sender");

    await expect.poll(() => seen().filter((n) => n >= 4).length, POLL).toBeGreaterThan(0);
    running("dispatcher").child.kill("SIGKILL");
    start("dispatcher");

    for (const id of events) await expect.poll(() => f.status(id, ep), POLL).toBe("succeeded");
    const got = seen();
    // Each event after every earlier one: repeats of an attempt are the only steps back to none.
    for (let i = 1; i < got.length; i++)
      expect(got[i]!, `arrivals ${got.join(",")}`).toBeGreaterThanOrEqual(got[i - 1]!);
    expect([...new Set(got)]).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
    // Event 1 came again after its sender died.
    expect(got.filter((n) => n === 1).length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
