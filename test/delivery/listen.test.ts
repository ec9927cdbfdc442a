import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { browserSessions } from "../support/browserSessions.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * The listen relay at the gateway's WebSocket (what `herald listen` speaks): a temporary endpoint
 * whose attempts come down the socket signed as in production, answered by the client, recorded
 * as the attempt's response; refused clearly when it cannot be opened; deleted when the socket
 * closes, or by the dispatcher when its lease runs out.
 */
type Frame = { type: string; id?: number; headers?: Record<string, string>; body?: string } & Record<
  string,
  // biome-ignore lint/suspicious/noExplicitAny: frames are read loosely and asserted
  any
>;

let sys: TestSystem;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem({
    RETRY_SCHEDULE: "1s",
    ATTEMPT_TIMEOUT: "2s",
    MAINTENANCE_INTERVAL: "1s",
    LISTEN_MAX_PER_ACCOUNT: "2",
  });
  f = fixtures(sys, await startReceiver());
  await setupApp(sys, ["order.placed", "order.shipped"]);
});
afterAll(async () => {
  await sys?.close();
});

type Socket = { ws: WebSocket; ready: Frame; frames: Frame[]; next(type: string): Promise<Frame> };

function connect(query: string, key = sys.key, headers: Record<string, string> = {}): Promise<Socket> {
  const ws = new WebSocket(`${sys.url.replace("http", "ws")}/v3/listen?${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  const frames: Frame[] = [];
  const waiters: (() => void)[] = [];
  ws.on("message", (data) => {
    frames.push(JSON.parse(String(data)));
    for (const w of waiters.splice(0)) w();
  });
  let taken = 0;
  const next = async (type: string): Promise<Frame> => {
    for (;;) {
      const i = frames.findIndex((fr, n) => n >= taken && fr.type === type);
      if (i >= 0) {
        taken = i + 1;
        return frames[i]!;
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} frame`)), 15_000);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () =>
        reject(Object.assign(new Error("refused"), { status: res.statusCode, body: JSON.parse(body) })),
      );
    });
    ws.once("error", reject);
    void next("ready").then((ready) => resolve({ ws, ready, frames, next }), reject);
  });
}

const closed = (ws: WebSocket) =>
  new Promise((r) => (ws.readyState === WebSocket.CLOSED ? r(null) : ws.once("close", r)));

describe("GET /v3/listen", () => {
  it("relays a signed delivery to the socket, and records its answer as the attempt's response", async () => {
    const s = await connect("app=acme&event_types=order.placed");
    expect(s.ready.endpoint).toMatchObject({
      app: expect.stringMatching(/^app_/),
      event_types: ["order.placed"],
    });
    expect(s.ready.endpoint.url).toBe(`herald-listen://${s.ready.endpoint.id}`);
    const ep: string = s.ready.endpoint.id;

    const event = await f.send("order.placed", { total: 42 });
    const request = await s.next("request");
    // Signed exactly as in production: the independent package verifies it with the secret.
    const payload = new Webhook(s.ready.secret).verify(request.body!, request.headers!) as { data: unknown };
    expect(payload.data).toEqual({ total: 42 });
    expect(request.headers!["webhook-id"]).toBe(event);
    s.ws.send(JSON.stringify({ type: "response", id: request.id, status: 201, body: "made locally" }));
    await expect.poll(() => f.status(event, ep), { timeout: 10_000 }).toBe("succeeded");
    const [attempt] = await f.attempts(`endpoint=${ep}`);
    expect(attempt).toMatchObject({
      response_status: 201,
      response_body: "made locally",
      url: `herald-listen://${ep}`,
    });

    // An answer of 500 fails the attempt, as any endpoint's would; no answer in time is a timeout.
    const failing = await f.send("order.placed");
    const first = await s.next("request");
    s.ws.send(JSON.stringify({ type: "response", id: first.id, status: 500, body: "boom" }));
    await s.next("request");
    await expect
      .poll(async () => (await f.attempts(`endpoint=${ep}&event=${failing}`)).map((a) => a.error).sort(), {
        timeout: 15_000,
      })
      .toEqual(["http_error", "timeout"]);

    s.ws.close();
    await closed(s.ws);
    await expect
      .poll(async () => (await sys.request("GET", `/v3/endpoints/${ep}`)).status, { timeout: 10_000 })
      .toBe(404);
  });

  it("refuses what cannot be opened with the API's errors", async () => {
    await expect(connect("app=acme", "hk_not_a_real_key_000000000000")).rejects.toMatchObject({
      status: 401,
      body: { error: { type: "authentication_error" } },
    });
    await expect(connect("")).rejects.toMatchObject({ status: 400, body: { error: { param: "app" } } });
    await expect(connect("app=acme&event_types=nope")).rejects.toMatchObject({
      status: 400,
      body: { error: { param: "event_types[0]" } },
    });
    const plain = await sys.request("GET", "/v3/listen?app=acme");
    expect(plain.status).toBe(426);
    expect(plain.body.error.code).toBe("upgrade_required");

    // A client sending garbage, binary or an oversized frame loses its own socket only.
    const hostile = await connect("app=acme");
    hostile.ws.send("not json");
    hostile.ws.send(Buffer.from([1, 2, 3]));
    hostile.ws.send("x".repeat(1024 * 1024));
    await closed(hostile.ws);
    expect((await sys.request("GET", "/v3/apps/acme")).status).toBe(200);
    await expect
      .poll(async () => (await sys.request("GET", `/v3/endpoints/${hostile.ready.endpoint.id}`)).status, {
        timeout: 10_000,
      })
      .toBe(404);

    // LISTEN_MAX_PER_ACCOUNT=2: a third at once is refused, and the account's others still work.
    const a = await connect("app=acme");
    const b = await connect("app=acme");
    await expect(connect("app=acme")).rejects.toMatchObject({
      status: 400,
      body: { error: { code: "listen_limit_reached" } },
    });
    const other = await sys.newAccount("listener-two");
    await sys.request("POST", "/v3/apps", { key: other, json: { uid: "acme", name: "acme" } });
    const theirs = await connect("app=acme", other);
    for (const s of [a, b, theirs]) s.ws.close();
    // Closed, their endpoints are deleted: the account may listen again.
    await expect
      .poll(
        async () =>
          (await sys.request("GET", "/v3/endpoints?app=acme&limit=100")).body.data.filter(
            (e: { url: string }) => e.url.startsWith("herald-listen:"),
          ).length,
        { timeout: 10_000 },
      )
      .toBe(0);
  });

  it("signs with a secret the client chose; its endpoint is deleted, never changed", async () => {
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const s = await connect("app=acme", sys.key, { "herald-listen-secret": secret });
    expect(s.ready.secret).toBe(secret);
    const ep: string = s.ready.endpoint.id;
    await f.send("order.shipped");
    const request = await s.next("request");
    expect(() => new Webhook(secret).verify(request.body!, request.headers!)).not.toThrow();
    s.ws.send(JSON.stringify({ type: "response", id: request.id, status: 204 }));
    for (const [path, json] of [
      [`/v3/endpoints/${ep}`, { url: "https://example.com/elsewhere" }],
      [`/v3/endpoints/${ep}/secret/rotate`, {}],
    ] as const) {
      const res = await sys.request("POST", path, { json });
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe("listen_endpoint");
    }
    await expect(
      connect("app=acme", sys.key, { "herald-listen-secret": "whsec_short" }),
    ).rejects.toMatchObject({
      status: 400,
      body: { error: { param: "Herald-Listen-Secret" } },
    });
    s.ws.close();
    await closed(s.ws);
    await expect
      .poll(async () => (await sys.request("GET", `/v3/endpoints/${ep}`)).status, { timeout: 10_000 })
      .toBe(404);
  });

  it("makes no endpoint for a request that is not a WebSocket handshake, and counts upgrades", async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${sys.url}/v3/listen?app=acme`, {
        headers: {
          authorization: `Bearer ${sys.key}`,
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "not a key",
        },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe("upgrade_invalid");
    const listening = (await sys.request("GET", "/v3/endpoints?app=acme&limit=100")).body.data.filter(
      (e: { url: string }) => e.url.startsWith("herald-listen:"),
    );
    expect(listening).toEqual([]);
    const metrics = await (await fetch(`${sys.url}/metrics`)).text();
    expect(metrics).toMatch(/herald_listen_upgrades_total\{status="400",[^}]*\} [1-9]/);
    expect(metrics).toMatch(/herald_listen_upgrades_total\{status="101",[^}]*\} [1-9]/);
    expect(metrics).toMatch(/herald_listen_sockets\{[^}]*\} 0/);
  });

  it("keeps a listen endpoint's secret from the app's portal", async () => {
    const { open, as, portal } = browserSessions(() => sys);
    const s = await connect("app=acme");
    const ep: string = s.ready.endpoint.id;
    const cookie = await open((await portal()).token);
    const fromPortal = await sys.request("GET", `/v3/endpoints/${ep}/secret`, as(cookie));
    expect(fromPortal.status).toBe(400);
    expect(fromPortal.body.error.code).toBe("listen_endpoint");
    // The account's key, the developer's, may.
    expect((await sys.request("GET", `/v3/endpoints/${ep}/secret`)).body.secret).toBe(s.ready.secret);
    s.ws.close();
    await closed(s.ws);
  });

  it("lets an account open only a few sockets a second", async () => {
    const key = await sys.newAccount("listen-opener");
    // `app=nope` makes nothing, but each try still takes its token first.
    const tries = await Promise.all(
      Array.from({ length: 14 }, () => connect("app=nope", key).catch((err) => err.status as number)),
    );
    expect(tries.filter((status) => status === 404).length).toBeGreaterThanOrEqual(9);
    expect(tries).toContain(429);
    // Another account is not held back by it.
    await expect(connect("app=nope")).rejects.toMatchObject({ status: 404 });
  });

  it("ends an endpoint whose lease ran out, its gateway gone", async () => {
    const s = await connect("app=acme");
    const ep: string = s.ready.endpoint.id;
    const pool = new pg.Pool({ connectionString: sys.databaseUrl, max: 1 });
    await pool.query("UPDATE endpoints SET listen_until = now() - interval '1 second' WHERE id = $1", [ep]);
    await pool.end();
    await expect
      .poll(async () => (await sys.request("GET", `/v3/endpoints/${ep}`)).status, { timeout: 15_000 })
      .toBe(404);
    s.ws.close();
  });
});
