import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAX_IN_FLIGHT } from "../../services/dispatcher/src/config.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { latenciesAt10PerSecond, p99 } from "../support/latency.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * One customer's endpoint never holds up another's deliveries. With the defaults a new user
 * has (one sender, SENDER_CONCURRENCY, ENDPOINT_MAX_IN_FLIGHT): app A's endpoint answers
 * each request after 10 s and has 1,000 events queued; app B's healthy endpoint, sent 40
 * events at 10 a second meanwhile, gets each within 2 s of its acceptance.
 */
let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  sys = await startSystem({});
  receiver = await startReceiver();
  receiver.on("/hang", { delayMs: 10_000 });
  await setupApp(sys, ["noisy.tick"], "noisy");
  await setupApp(sys, ["quiet.tick"], "quiet");
});
afterAll(async () => {
  await receiver?.close();
  await sys?.close();
});

/** Runs `task` for 0..n-1, `width` at a time. */
async function pool(n: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

describe("a hanging endpoint with a backlog", () => {
  it("delays no other app's deliveries, and holds only its share of the senders", async () => {
    const noisy = fixtures(sys, receiver, "noisy");
    const quiet = fixtures(sys, receiver, "quiet");
    await noisy.endpoint("/hang");
    await quiet.endpoint("/quiet");

    await pool(1000, 10, async () => {
      await noisy.send("noisy.tick");
    });
    const latencies = await latenciesAt10PerSecond(quiet, receiver, "quiet.tick", "/quiet", 40);
    expect(p99(latencies), `latencies ${latencies.join(",")}`).toBeLessThanOrEqual(2000);

    // The hanging endpoint never had more than its limit in flight: no more than that many
    // of its requests arrived within any span shorter than the 10 s each one took.
    const hung = receiver.received("/hang").map((r) => r.at);
    expect(hung.length).toBeGreaterThan(0);
    const most = Math.max(...hung.map((t) => hung.filter((u) => u >= t && u < t + 9500).length));
    expect(most).toBeLessThanOrEqual(DEFAULT_MAX_IN_FLIGHT);
    expect(most).toBe(DEFAULT_MAX_IN_FLIGHT);

    const endpoint = (await sys.request("GET", "/v3/endpoints?app=noisy")).body.data[0];
    expect(endpoint.delivery_state).toMatchObject({ state: "throttled", reason: "max_in_flight" });
  });
});
