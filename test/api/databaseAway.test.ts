import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Herald } from "../../packages/sdk/src/index.ts";
import { withIdempotency } from "../../services/api-gateway/src/http/idempotency.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts";

/**
 * The gateway while its database is away, reached through a proxy the test cuts (connections
 * dropped, new ones refused), without touching the PostgreSQL other test files share: every
 * request that needs the database is answered at once with `503` in the API's error format
 * and a Retry-After, not a 500; it stays alive (/healthz) and says it is not ready (/readyz);
 * once the database is back, the same requests succeed, and nothing accepted before was lost.
 */
let proxy: TcpProxy;
let gw: TestGateway;

beforeAll(async () => {
  proxy = await startTcpProxy("127.0.0.1", 5432);
  gw = await startGateway({}, [], (url) => {
    const via = new URL(url);
    via.port = String(proxy.port);
    return via.toString();
  });
  expect((await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).status).toBe(201);
  expect((await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid" } })).status).toBe(201);
});

afterAll(async () => {
  await proxy?.restore().catch(() => {});
  await gw?.close();
  await proxy?.close();
});

const send = (i: number, key?: string) =>
  gw.request("POST", "/v3/events", {
    json: { app: "acme", type: "invoice.paid", data: { i } },
    headers: key ? { "idempotency-key": key } : {},
  });

describe("the gateway with its database away", () => {
  it("answers 503 with Retry-After, at once, and serves again when it is back", async () => {
    const before = await send(0);
    expect(before.status).toBe(201);

    await proxy.cut();
    const started = Date.now();
    const refused = await Promise.all([
      send(1, "retry-me"),
      gw.request("GET", "/v3/apps"),
      gw.request("POST", "/v3/apps", { json: { name: "Other" } }),
      gw.request("GET", `/v3/events/${before.body.id}`),
    ]);
    // Refused connections fail at once; an address that drops packets at CONNECT_TIMEOUT_MS.
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const res of refused) {
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.headers.get("retry-after")).toBe("2");
      expect(res.body).toEqual({
        error: {
          type: "api_error",
          code: "service_unavailable",
          message: expect.stringContaining("Retry-After"),
        },
      });
    }
    expect((await gw.request("GET", "/healthz")).status).toBe(200);
    const ready = await gw.request("GET", "/readyz");
    expect([ready.status, ready.body.checks.database]).toEqual([503, "unreachable"]);

    await proxy.restore();
    // The request refused is done once retried with its key; the one accepted before is there.
    const retried = await send(1, "retry-me");
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect((await send(1, "retry-me")).body.id).toBe(retried.body.id);
    expect((await gw.request("GET", `/v3/events/${before.body.id}`)).status).toBe(200);
    expect((await gw.request("GET", "/readyz")).status).toBe(200);
  });

  it("is ridden through by the SDK, which waits the Retry-After and sends again with the same key", async () => {
    const herald = new Herald({ apiKey: gw.key, baseUrl: gw.url });
    await proxy.cut();
    const sending = herald.events.send({ app: "acme", type: "invoice.paid", data: { through: "outage" } });
    setTimeout(() => void proxy.restore(), 1_000);
    const event = await sending;
    expect(event.id).toMatch(/^evt_/);
    const listed = await gw.request("GET", "/v3/events?app=acme&limit=50");
    const through = listed.body.data.filter(
      (e: { data: { through?: string } }) => e.data.through === "outage",
    );
    expect(through.map((e: { id: string }) => e.id)).toEqual([event.id]);
  });

  it("settles an Idempotency-Key the outage caught mid-request once the database is back", async () => {
    const { prisma, placeholders, secrets } = gw.gateway.deps;
    const direct = new pg.Client({ connectionString: gw.databaseUrl });
    await direct.connect();
    const record = async (key: string) =>
      (
        await direct.query<{ response_status: number }>(
          "SELECT response_status FROM idempotency_records WHERE key = $1",
          [key],
        )
      ).rows;
    try {
      // The work was done, then the database went away before its reply was stored: the reply
      // is stored once it is back.
      const done = await withIdempotency(
        prisma,
        placeholders,
        secrets,
        "acct-x",
        "done-then-away",
        "h",
        async () => {
          await proxy.cut();
          return { status: 201, body: { id: "done" } };
        },
      );
      expect(done.status).toBe(201);
      expect(await record("done-then-away")).toEqual([{ response_status: 0 }]);
      await proxy.restore();
      await expect
        .poll(() => record("done-then-away"), { timeout: 10_000 })
        .toEqual([{ response_status: 201 }]);

      // The request failed with the database away: its placeholder is removed once it is back.
      const failed = await withIdempotency(
        prisma,
        placeholders,
        secrets,
        "acct-x",
        "failed-away",
        "h",
        async () => {
          await proxy.cut();
          throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
        },
      ).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(Error);
      expect(await record("failed-away")).toEqual([{ response_status: 0 }]);
      await proxy.restore();
      await expect.poll(() => record("failed-away"), { timeout: 10_000 }).toEqual([]);
    } finally {
      await proxy.restore();
      await direct.end();
    }
  });
});
