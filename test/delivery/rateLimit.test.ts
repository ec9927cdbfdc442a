import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * An endpoint's `rate_limit`, enforced across every dispatcher and sender: a `rate_limit: 5`
 * endpoint given 100 events receives at most 5 a second after a burst of one second's worth,
 * every delivery succeeds on its first attempt (waiting used no retry step), and the endpoint
 * says it is throttled while they wait.
 */
let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  sys = await startSystem({}, { dispatchers: 2, senders: 2 });
  receiver = await startReceiver();
  await setupApp(sys, ["paced.tick"]);
});
afterAll(async () => {
  await sys?.close();
  await receiver?.close();
});

describe("rate_limit", () => {
  it("is set, changed and cleared through the API, within 1 to 10,000", async () => {
    const f = fixtures(sys, receiver);
    const id = await f.endpoint("/limits", { rate_limit: 50, max_in_flight: 4 });
    const got = (await sys.request("GET", `/v3/endpoints/${id}`)).body;
    expect(got).toMatchObject({ rate_limit: 50, max_in_flight: 4, delivery_state: { state: "active" } });
    const cleared = await sys.request("POST", `/v3/endpoints/${id}`, { json: { rate_limit: null } });
    expect(cleared.body).toMatchObject({ rate_limit: null, max_in_flight: 4 });
    for (const [field, value] of [
      ["rate_limit", 0],
      ["rate_limit", 10_001],
      ["rate_limit", 2.5],
      ["max_in_flight", 0],
      ["max_in_flight", 1001],
    ] as const) {
      const res = await sys.request("POST", `/v3/endpoints/${id}`, { json: { [field]: value } });
      expect(res.status, `${field}: ${value}`).toBe(400);
      expect(res.body.error.param).toBe(field);
    }
  });

  it("holds a rate_limit: 5 endpoint to 5 a second plus one second's burst, with no retry step used", async () => {
    const f = fixtures(sys, receiver);
    const ep = await f.endpoint("/paced", { rate_limit: 5 });
    const events: string[] = [];
    for (let i = 0; i < 100; i++) events.push(await f.send("paced.tick"));
    await expect
      .poll(async () => (await sys.request("GET", `/v3/endpoints/${ep}`)).body.delivery_state.reason, {
        timeout: 5000,
      })
      .toBe("rate_limit");
    await expect.poll(() => receiver.received("/paced").length, { timeout: 40_000, interval: 250 }).toBe(100);

    const at = receiver.received("/paced").map((r) => r.at);
    const first = at[0]!;
    // Any one-second window: 5 a second plus the first second's burst of 5, no more.
    const busiest = Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 1000).length));
    expect(busiest).toBeLessThanOrEqual(10);
    // 100 at 5 a second after a burst of 5: 19 s at the least (a little slack for timers).
    expect(at.at(-1)! - first).toBeGreaterThanOrEqual(18_000);
    expect(new Set(receiver.received("/paced").map((r) => r.headers["webhook-id"])).size).toBe(100);
    for (const id of events.slice(-5)) {
      const [d] = await f.deliveries(id);
      expect(d).toMatchObject({ status: "succeeded", attempts: 1 });
    }
    const attempts = await f.attempts(`endpoint=${ep}`);
    expect(attempts.every((a) => a.attempt_number === 1 && a.status === "succeeded")).toBe(true);
  });
});
