import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectList, expectMatches } from "../support/openapi.ts";
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

type Health = {
  endpoint: string;
  app: string;
  url: string;
  disabled: boolean;
  succeeded: number;
  failed: number;
  success_rate: number | null;
  last_attempt_at: string | null;
  failing_since: string | null;
};

describe("endpoints' health", () => {
  it("is a 404, not an error, for an endpoint deleted while its health is read", async () => {
    const ep = await f.endpoint("/deleted-midway");
    const pool = sys.gateway.deps.pool;
    const query = pool.query.bind(pool);
    // The endpoint goes between the gateway finding it and reading its health.
    const patched = async (text: unknown, values?: unknown) => {
      if (typeof text === "string" && text.includes("WITH counts")) {
        pool.query = query;
        await query("UPDATE endpoints SET deleted_at = now() WHERE id = $1", [ep]);
      }
      return query(text as string, values as unknown[]);
    };
    pool.query = patched as typeof pool.query;
    try {
      const res = await sys.request("GET", `/v3/endpoints/${ep}/stats`);
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.error).toMatchObject({ code: "resource_missing", param: "id" });
    } finally {
      pool.query = query;
    }
  });

  it("lists every endpoint with its health, the ones failing now first", async () => {
    await setupApp(sys, ["rank.a", "rank.b", "rank.c", "rank.d", "rank.none"], "ranked");
    const r = fixtures(sys, receiver, "ranked");
    const at = (path: string, type: string, extra: Record<string, unknown> = {}) =>
      r.endpoint(path, { event_types: [type], ...extra });
    receiver.on("/rank-down-early", { status: 500 });
    receiver.on("/rank-down-late", { status: 500 });
    receiver.on("/rank-flaky", (_req, n) => ({ status: n === 1 ? 500 : 200 }));
    const downEarly = await at("/rank-down-early", "rank.a");
    const downLate = await at("/rank-down-late", "rank.b");
    const flaky = await at("/rank-flaky", "rank.c");
    const healthy = await at("/rank-healthy", "rank.d");
    const disabled = await at("/rank-disabled", "rank.d", { disabled: true });
    const idle = await at("/rank-idle", "rank.none");

    // The early one starts failing before the late one does.
    const a = await r.send("rank.a");
    await expect.poll(() => r.status(a, downEarly), { timeout: 10_000 }).toBe("retrying");
    const b = await r.send("rank.b");
    const c = await r.send("rank.c");
    const d = await r.send("rank.d");
    await expect.poll(() => r.status(a, downEarly), { timeout: 15_000 }).toBe("failed");
    await expect.poll(() => r.status(b, downLate), { timeout: 15_000 }).toBe("failed");
    await expect.poll(() => r.status(c, flaky), { timeout: 15_000 }).toBe("succeeded");
    await expect.poll(() => r.status(d, healthy), { timeout: 10_000 }).toBe("succeeded");

    const res = await sys.request("GET", "/v3/stats/endpoints?app=ranked");
    expect(res.status).toBe(200);
    expectList(res.body, "EndpointHealth");
    const data = res.body.data as Health[];
    // Failing now (the longest first), disabled, then by success rate, none last.
    expect(data.map((h) => h.endpoint)).toEqual([downEarly, downLate, disabled, flaky, healthy, idle]);
    expect(res.body.has_more).toBe(false);
    const of = (id: string) => data.find((h) => h.endpoint === id)!;
    expect(of(downEarly)).toMatchObject({ succeeded: 0, failed: 2, success_rate: 0, disabled: false });
    expect(Date.parse(of(downEarly).failing_since!)).toBeLessThan(Date.parse(of(downLate).failing_since!));
    expect(of(flaky)).toMatchObject({ succeeded: 1, failed: 1, success_rate: 0.5, failing_since: null });
    expect(of(healthy)).toMatchObject({
      object: "endpoint_health",
      app: expect.stringMatching(/^app_/),
      url: `${receiver.url}/rank-healthy`,
      description: "",
      succeeded: 1,
      failed: 0,
      success_rate: 1,
    });
    expect(of(disabled)).toMatchObject({
      disabled: true,
      succeeded: 0,
      success_rate: null,
      last_attempt_at: null,
    });
    expect(of(idle)).toMatchObject({ success_rate: null, last_attempt_at: null, failing_since: null });
    // The same figures as the endpoint's own health.
    const own = (await sys.request("GET", `/v3/endpoints/${flaky}/stats`)).body;
    const { object: _, endpoint: __, window: ___, ...figures } = own;
    expect(of(flaky)).toMatchObject(figures);

    const first = await sys.request("GET", "/v3/stats/endpoints?app=ranked&limit=2");
    expect(first.body.data.map((h: Health) => h.endpoint)).toEqual([downEarly, downLate]);
    expect(first.body.has_more).toBe(true);
    const all = (await sys.request("GET", "/v3/stats/endpoints?limit=100")).body.data as Health[];
    expect(all.map((h) => h.endpoint)).toEqual(expect.arrayContaining([downEarly, idle]));
    expect(all.length).toBeGreaterThan(data.length);
    expect((await sys.request("GET", "/v3/stats/endpoints?app=elsewhere")).body.data).toEqual([]);
    for (const query of ["limit=0", "limit=101", "app=nowhere"]) {
      const bad = await sys.request("GET", `/v3/stats/endpoints?${query}`);
      expect(bad.status, query).toBe(query.startsWith("app") ? 404 : 400);
      expect(bad.body.error.param, query).toBe(query.split("=")[0]);
    }
  });
});
