import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AttemptRequestedV1, RECORDED_BODY_MAX_BYTES } from "@herald/contracts";
import { createSecretBox, endpointSecretContext } from "@herald/db/secrets";
import { TransformPool } from "@herald/transform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeliverOptions, deliver } from "./deliver.ts";
import { egressAgents, parseNoProxy } from "./egress.ts";
import { recordedBody } from "./transformation.ts";

/**
 * deliver.ts's transformation path, with a real pool of QuickJS workers and a real local
 * server: what is sent is what the transformation made, signed over the body sent; what it may
 * not do (leave HTTP's method or URL on a queue, reach a private address, carry credentials in
 * the URL) fails its attempt before any request. The whole path, through the dispatcher and
 * the database, is test/delivery/transformations.test.ts.
 */
const secrets = createSecretBox(randomBytes(32));
const secret = `whsec_${randomBytes(32).toString("base64")}`;
const transforms = new TransformPool({
  workers: 2,
  cached: 16,
  queuePerOwner: 10,
  memoryBytes: 16 << 20,
  timeoutMs: 200,
});
const agents = egressAgents({ keepAlive: false }, null, parseNoProxy(""));
type Got = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
const received: Got[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  // Loaded before the first attempt, whose 2 s deadline a cold start on a loaded machine could take.
  await transforms.warm();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await transforms.close();
  agents.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const options = (over: Partial<DeliverOptions> = {}): DeliverOptions => ({
  secrets,
  agents,
  timeoutMs: 2000,
  allowPrivate: true,
  userAgent: "Herald-Test",
  transforms,
  ...over,
});

const payload = '{"type":"invoice.paid","timestamp":"2026-11-27T00:00:00.000Z","data":{"amount": 1200}}';

function attempt(transformation: string, url = `${base}/hook`): AttemptRequestedV1 {
  return {
    attempt_id: `atmpt_${randomBytes(4).toString("hex")}`,
    delivery_id: "dlv_1",
    event_id: "evt_1",
    endpoint_id: "ep_1",
    app_id: "app_1",
    attempt_number: 1,
    url,
    headers: { "X-Tenant": "acme" },
    secrets: [secrets.seal(secret, endpointSecretContext("ep_1"))],
    payload,
    transformation,
  };
}

describe("an attempt through its transformation", () => {
  it("sends what it made, with its method, URL and headers, signed over the body sent", async () => {
    received.length = 0;
    const source = `function handler(w) {
      w.method = "PUT";
      w.url = w.url.replace("/hook", "/elsewhere?via=t");
      w.headers["x-extra"] = "yes";
      w.headers["content-type"] = "text/plain";
      w.payload = "amount=" + w.payload.data.amount;
      return w;
    }`;
    const outcome = await deliver(attempt(source), options());
    expect(outcome).toMatchObject({
      succeeded: true,
      response_status: 200,
      request_method: "PUT",
      request_url: `${base}/elsewhere?via=t`,
      request_body: "amount=1200",
    });
    const [got] = received;
    expect(got).toMatchObject({ method: "PUT", url: "/elsewhere?via=t", body: "amount=1200" });
    expect(got!.headers).toMatchObject({
      "x-tenant": "acme",
      "x-extra": "yes",
      "content-type": "text/plain",
      "user-agent": "Herald-Test",
    });
    const headers = got!.headers as Record<string, string>;
    // The signature covers the body as sent (not JSON here), under Herald's id and timestamp.
    const signed = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${got!.body}`;
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    expect(headers["webhook-signature"]).toBe(
      `v1,${createHmac("sha256", key).update(signed).digest("base64")}`,
    );
    // Every header it returned is recorded by name, its value redacted.
    expect(outcome.request_headers).toMatchObject({ "x-extra": "[redacted]", "x-tenant": "[redacted]" });
  });

  it("cancels: no request made, neither a success nor a failure", async () => {
    received.length = 0;
    const outcome = await deliver(attempt("function handler(w) { w.cancel = true; return w; }"), options());
    expect(outcome).toMatchObject({ succeeded: false, cancelled: true, error: null, response_status: null });
    expect(outcome).not.toHaveProperty("request_method");
    expect(received).toEqual([]);
  });

  it("fails as transformation_error naming the line when it throws, and makes no request", async () => {
    received.length = 0;
    const source = "function handler(w) {\n  const x = 1;\n  throw new Error('no ' + x);\n}";
    const outcome = await deliver(attempt(source), options());
    expect(outcome).toMatchObject({
      succeeded: false,
      error: "transformation_error",
      response_body: "Error: no 1 (line 3)",
    });
    // A message of a megabyte is cut, its line kept.
    const long = await deliver(
      attempt("function handler(w) {\n  throw new Error('x'.repeat(1000000));\n}"),
      options(),
    );
    expect(long.response_body!.length).toBeLessThanOrEqual(4096);
    expect(long.response_body).toMatch(/… \(line 2\)$/);
    expect(received).toEqual([]);
  });

  it("fails a changed URL to a private address as blocked_destination, before any request", async () => {
    received.length = 0;
    const source = `function handler(w) { w.url = "http://169.254.169.254/latest/meta-data"; return w; }`;
    const outcome = await deliver(
      attempt(source, "http://93.184.215.14/hook"),
      options({ allowPrivate: false }),
    );
    expect(outcome).toMatchObject({
      error: "blocked_destination",
      request_url: "http://169.254.169.254/latest/meta-data",
    });
  });

  it("refuses credentials in a changed URL", async () => {
    const source = `function handler(w) { w.url = "${base.replace("//", "//user:pw@")}/hook"; return w; }`;
    const outcome = await deliver(attempt(source), options());
    expect(outcome).toMatchObject({ error: "transformation_error" });
    expect(outcome.response_body).toMatch(/credentials/);
  });

  it("may change only the payload and headers of a destination beyond HTTP", async () => {
    const published: string[] = [];
    const transports = {
      of: () => ({
        type: "redis" as const,
        async send(_t: unknown, message: { body: string; headers: Record<string, string> }) {
          published.push(message.body);
          return { detail: "stream s, entry 1-0" };
        },
        async close() {},
      }),
    };
    const url = "redis://127.0.0.1:6379/0?stream=s";
    const moved = await deliver(
      attempt(`function handler(w) { w.url = "https://example.com/"; return w; }`, url),
      options({ transports }),
    );
    expect(moved).toMatchObject({ error: "transformation_error" });
    expect(moved.response_body).toMatch(/set `url`, which a redis endpoint has not/);
    const reshaped = await deliver(
      attempt(`function handler(w) { w.payload = { n: w.payload.data.amount }; return w; }`, url),
      options({ transports }),
    );
    expect(reshaped).toMatchObject({ succeeded: true, request_body: '{"n":1200}' });
    // A queue has no method or URL: only the body is recorded.
    expect(reshaped).not.toHaveProperty("request_method");
    expect(published).toEqual(['{"n":1200}']);
  });

  it("publishes to a destination with credentials: its URL as stored shows them `[redacted]`, not set by the code", async () => {
    const published: string[] = [];
    const transports = {
      of: () => ({
        type: "redis" as const,
        async send(_t: unknown, message: { body: string }) {
          published.push(message.body);
          return { detail: "stream s, entry 1-0" };
        },
        async close() {},
      }),
    };
    const url = "redis://[redacted]@127.0.0.1:6379/0?stream=s";
    const outcome = await deliver(
      attempt(`function handler(w) { w.payload = { n: w.payload.data.amount }; return w; }`, url),
      options({ transports }),
    );
    expect(outcome).toMatchObject({ succeeded: true, request_body: '{"n":1200}' });
    expect(published).toEqual(['{"n":1200}']);
  });
});

describe("an attempt whose transformation could not get a worker in time", () => {
  it("fails as transformation_busy, not the endpoint's transformation_error, and makes no request", async () => {
    const one = new TransformPool({
      workers: 1,
      cached: 4,
      queuePerOwner: 10,
      memoryBytes: 16 << 20,
      timeoutMs: 400,
    });
    try {
      await one.warm();
      const before = received.length;
      // Another account's endless loop holds the only worker for its 400 ms budget.
      const hostile = {
        ...attempt("function handler(w) { while (true) {} }"),
        endpoint_id: "ep_loop",
        account_id: "acct_2",
      };
      const looping = deliver(hostile, options({ transforms: one, timeoutMs: 2000 }));
      const waiting = await deliver(
        { ...attempt("function handler(w) { return w; }"), account_id: "acct_1" },
        options({ transforms: one, timeoutMs: 100 }),
      );
      expect(waiting).toMatchObject({
        succeeded: false,
        error: "transformation_busy",
        response_status: null,
      });
      expect(waiting.response_body).toContain("was not run");
      expect(await looping).toMatchObject({ error: "transformation_error" });
      expect(received.length).toBe(before);
    } finally {
      await one.close();
    }
  });
});

describe("the body an attempt records", () => {
  it("is the first RECORDED_BODY_MAX_BYTES bytes, cut before a character, not through one", () => {
    expect(recordedBody("short")).toBe("short");
    const body = `${"a".repeat(RECORDED_BODY_MAX_BYTES - 1)}é and more`;
    const cut = recordedBody(body);
    expect(cut).toBe("a".repeat(RECORDED_BODY_MAX_BYTES - 1));
    expect(Buffer.byteLength(recordedBody("é".repeat(RECORDED_BODY_MAX_BYTES)))).toBe(
      RECORDED_BODY_MAX_BYTES,
    );
  });
});
