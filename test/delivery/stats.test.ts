import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectMatches } from "../support/openapi.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  receiver = await startReceiver();
  await setupApp(sys, ["stat.counted"]);
  await setupApp(sys, [], "elsewhere");
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

type Bucket = {
  start: string;
  succeeded: number;
  failed: number;
  p50_ms: number | null;
  p95_ms: number | null;
};
const total = (data: Bucket[], key: "succeeded" | "failed") => data.reduce((n, b) => n + b[key], 0);

describe("attempt statistics", () => {
  it("count attempts by outcome per minute with durations, and each endpoint's health", async () => {
    receiver.on("/healthy", { status: 200 });
    receiver.on("/broken", { status: 500 });
    const healthy = await f.endpoint("/healthy");
    const broken = await f.endpoint("/broken");
    const events = [await f.send("stat.counted"), await f.send("stat.counted"), await f.send("stat.counted")];
    for (const eventId of events) {
      await expect.poll(() => f.status(eventId, healthy), { timeout: 10_000 }).toBe("succeeded");
      await expect.poll(() => f.status(eventId, broken), { timeout: 15_000 }).toBe("failed");
    }

    const stats = await sys.request("GET", "/v3/stats/attempts?window=1h");
    expectMatches(stats.body, "AttemptStats");
    expect(stats.body.bucket).toBe("minute");
    expect(total(stats.body.data, "succeeded")).toBe(3);
    expect(total(stats.body.data, "failed")).toBe(6);
    for (const b of stats.body.data as Bucket[]) expect(b.p50_ms!).toBeLessThanOrEqual(b.p95_ms!);

    const onlyBroken = await sys.request("GET", `/v3/stats/attempts?endpoint=${broken}&window=24h`);
    expect(onlyBroken.body.bucket).toBe("hour");
    expect([total(onlyBroken.body.data, "succeeded"), total(onlyBroken.body.data, "failed")]).toEqual([0, 6]);
    expect((await sys.request("GET", "/v3/stats/attempts?app=elsewhere")).body.data).toEqual([]);

    const good = await sys.request("GET", `/v3/endpoints/${healthy}/stats`);
    expectMatches(good.body, "EndpointStats");
    expect(good.body).toMatchObject({
      endpoint: healthy,
      succeeded: 3,
      failed: 0,
      success_rate: 1,
      failing_since: null,
    });
    expect(Date.parse(good.body.last_attempt_at)).toBeGreaterThan(Date.now() - 60_000);
    const bad = await sys.request("GET", `/v3/endpoints/${broken}/stats`);
    expect(bad.body).toMatchObject({ succeeded: 0, failed: 6, success_rate: 0 });
    expect(bad.body.failing_since).not.toBeNull();

    expect((await sys.request("GET", "/v3/stats/attempts?window=7d")).body.error.param).toBe("window");
  });
});
