import { createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  Herald,
  HeraldAbortError,
  HeraldConnectionError,
  HeraldError,
  HeraldNotFoundError,
  HeraldRateLimitError,
  HeraldServerError,
  HeraldTimeoutError,
  responseOf,
} from "../../packages/sdk/src/index.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { type LocalProxy, type Step, startProxy } from "./proxy.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const proxies: LocalProxy[] = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
});
async function proxy(plan: (n: number) => Step, addHeaders?: Record<string, string>): Promise<LocalProxy> {
  const p = await startProxy(gw.url, plan, addHeaders);
  proxies.push(p);
  return p;
}
const unavailable: Step = {
  status: 503,
  body: "upstream unavailable",
  headers: { "content-type": "text/plain" },
};

async function rejection<T extends Error>(
  promise: Promise<unknown>,
  type: new (...a: never[]) => T,
): Promise<T> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as T;
}

describe("retries", () => {
  it("retry a POST whose answer was lost with the same Idempotency-Key, and the work is done once", async () => {
    const keys: (string | null)[] = [];
    let answered = 0;
    // The first request reaches the gateway and is done; its answer is lost on the way back.
    const losesFirstAnswer: typeof fetch = async (input, init) => {
      keys.push(new Headers(init?.headers).get("idempotency-key"));
      const response = await fetch(input, init);
      if (++answered === 1) {
        await response.text();
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }),
        });
      }
      return response;
    };
    const herald = new Herald({ apiKey: gw.key, baseUrl: gw.url, fetch: losesFirstAnswer });
    const app = await herald.apps.create({ name: "Lost answer", uid: "lost-answer" });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    // Without the key the retry would be a 409 (uid taken); with it, the first answer again.
    expect(responseOf(app)).toMatchObject({ attempts: 2, replayed: true, idempotencyKey: keys[0] });
    const direct = new Herald({ apiKey: gw.key, baseUrl: gw.url });
    expect((await direct.apps.retrieve("lost-answer")).id).toBe(app.id);
    const named = (await direct.apps.list({ limit: 100 }).toArray()).filter((a) => a.name === "Lost answer");
    expect(named).toHaveLength(1);
  });

  it("retry a 503 until the real gateway answers, POSTs with the same key", async () => {
    const p = await proxy((n) => (n % 2 === 1 ? unavailable : "forward"));
    const herald = new Herald({ apiKey: gw.key, baseUrl: p.url });
    const app = await herald.apps.create({ name: "Through a 503" });
    expect(p.requests).toHaveLength(2);
    expect(p.requests[0]!.headers["idempotency-key"]).toBe(p.requests[1]!.headers["idempotency-key"]);
    expect(responseOf(app)).toMatchObject({ attempts: 2, replayed: false });
    expect((await herald.apps.retrieve(app.id)).name).toBe("Through a 503");
    expect(p.requests).toHaveLength(4);
  });

  it("stop after maxRetries with a typed server error, and never retry another 4xx", async () => {
    const down = await proxy(() => unavailable);
    const herald = new Herald({ apiKey: gw.key, baseUrl: down.url, maxRetries: 1 });
    const err = await rejection(herald.apps.list().firstPage(), HeraldServerError);
    expect(err).toMatchObject({ status: 503, type: "api_error", code: "unexpected_response" });
    expect(err.message).toContain("upstream unavailable");
    expect(down.requests).toHaveLength(2);

    const passing = await proxy(() => "forward");
    const through = new Herald({ apiKey: gw.key, baseUrl: passing.url });
    const missing = await rejection(through.apps.retrieve("app_nope"), HeraldNotFoundError);
    expect(passing.requests).toHaveLength(1);
    expect(missing.requestId).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it("honour Retry-After on the gateway's own 429", async () => {
    const limited = await startGateway({ RATE_LIMIT_PER_SECOND: "1" });
    try {
      const herald = new Herald({ apiKey: limited.key, baseUrl: limited.url, maxRetries: 0 });
      let refused: unknown = null;
      for (let i = 0; i < 10 && !refused; i++)
        await herald.apps
          .list()
          .firstPage()
          .catch((e) => (refused = e));
      expect(refused).toBeInstanceOf(HeraldRateLimitError);
      expect(refused).toMatchObject({ status: 429, type: "rate_limit_error", retryAfterSeconds: 1 });
      const started = performance.now();
      const page = await herald.apps.list({}, { maxRetries: 2 }).firstPage();
      // The backoff alone would wait 250 to 500 ms before the first retry.
      expect(performance.now() - started).toBeGreaterThanOrEqual(950);
      expect(responseOf(page)).toMatchObject({ status: 200, attempts: 2 });
    } finally {
      await limited.close();
    }
  });
});

describe("timeouts and aborts", () => {
  it("time out an attempt that gets no answer, per call over the client's default, retried like no answer", async () => {
    const silent = await proxy(() => "hang");
    const herald = new Herald({ apiKey: gw.key, baseUrl: silent.url, timeoutMs: 60_000, maxRetries: 0 });
    const started = performance.now();
    const err = await rejection(herald.apps.retrieve("app_x", { timeoutMs: 200 }), HeraldTimeoutError);
    expect(err).toBeInstanceOf(HeraldConnectionError);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(silent.requests).toHaveLength(1);

    const post = await rejection(
      herald.apps.create({ name: "Slow" }, { timeoutMs: 150, maxRetries: 1 }),
      HeraldTimeoutError,
    );
    expect(silent.requests).toHaveLength(3);
    expect(post.idempotencyKey).toBe(silent.requests[1]!.headers["idempotency-key"]);
    expect(silent.requests[2]!.headers["idempotency-key"]).toBe(post.idempotencyKey);
  });

  it("abort a call in flight, or before it starts, without retrying", async () => {
    const silent = await proxy(() => "hang");
    const herald = new Herald({ apiKey: gw.key, baseUrl: silent.url, maxRetries: 3 });
    const started = performance.now();
    const inFlight = herald.apps.list({}, { signal: AbortSignal.timeout(100) }).firstPage();
    const err = await rejection(inFlight, HeraldAbortError);
    expect(err).toBeInstanceOf(HeraldError);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(silent.requests).toHaveLength(1);

    const controller = new AbortController();
    controller.abort(new Error("user left"));
    await rejection(herald.apps.retrieve("app_x", { signal: controller.signal }), HeraldAbortError);
    expect(silent.requests).toHaveLength(1);
  });

  it("abort a call while it waits to retry", async () => {
    const down = await proxy(() => unavailable);
    const herald = new Herald({ apiKey: gw.key, baseUrl: down.url, maxRetries: 5 });
    const started = performance.now();
    await rejection(herald.apps.retrieve("app_x", { signal: AbortSignal.timeout(150) }), HeraldAbortError);
    // Five retries would take seconds of backoff.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(down.requests.length).toBeLessThanOrEqual(2);
  });

  it("report a refused connection as a connection error after retrying it", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const herald = new Herald({ apiKey: gw.key, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 });
    const started = performance.now();
    const err = await rejection(herald.apps.list().firstPage(), HeraldConnectionError);
    expect(err).not.toBeInstanceOf(HeraldTimeoutError);
    expect(err.message).toContain("ECONNREFUSED");
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
  });
});
