import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Endpoints' transformations through the whole system (gateway, dispatcher, sender with its
 * QuickJS workers), each saved through the API and its attempts read where the dispatcher
 * recorded them: real deliveries reshaped, given headers, sent with another method to
 * another URL, or cancelled, each signature verified with `standardwebhooks` over the body
 * received; and hostile code (an endless loop, memory bombs, reaching for the host's process,
 * require, globalThis, network and timers) failing only its own attempts, as
 * `transformation_error` with the cause and the line, while a neighbour app's endpoints get
 * every delivery. What the sandbox allows is packages/transform's tests; what deliver.ts does
 * with a transformation's answer (a private address, credentials in the URL, a queue's URL) is
 * services/sender/src/transformation.test.ts.
 */
let sys: TestSystem;
let receiver: Receiver;
let hooks: Hooks;
let db: pg.Pool;

beforeAll(async () => {
  // Three retries 3 s apart: a hostile delivery is retrying for 9 s, long after a neighbour's
  // deliveries are done. The breaker never opens: each attempt is made and fails on its own.
  // Ten hostile endpoints are saved in a row: the compile rate's burst is not what is tested.
  sys = await startSystem({
    RETRY_SCHEDULE: "3s,3s,3s",
    ENDPOINT_BREAKER_AFTER: "1000",
    TRANSFORMATION_RATE_LIMIT_PER_SECOND: "0",
  });
  receiver = await startReceiver();
  hooks = await startHooks();
  await setupApp(sys, ["invoice.paid"]);
  db = new pg.Pool({ connectionString: sys.databaseUrl, max: 2 });
});
afterAll(async () => {
  await db.end();
  await sys.close();
  await receiver.close();
  await hooks.close();
});

/** A receiver that records each request's method and URL too (the support receiver keeps paths). */
type Hit = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
type Hooks = { url: string; hits: Hit[]; at(path: string): Hit[]; close(): Promise<void> };

async function startHooks(): Promise<Hooks> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      hits.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    at: (path) => hits.filter((h) => h.url.split("?")[0] === path),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An endpoint with a transformation, saved (and compiled) through the API. */
async function endpoint(url: string, transformation: string, app = "acme", extra = {}) {
  const res = await sys.request("POST", "/v3/endpoints", { json: { app, url, transformation, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

type AttemptRow = {
  id: string;
  attempt_number: number;
  status: string;
  error: string | null;
  response_body: string | null;
  request_method: string | null;
  request_url: string | null;
  request_body: string | null;
  request_headers: Record<string, string> | null;
};

async function attempts(endpointId: string, eventId?: string): Promise<AttemptRow[]> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT id, attempt_number, status, error, response_body, request_method, request_url, request_body, request_headers
     FROM attempts WHERE endpoint_id = $1 AND ($2::text IS NULL OR event_id = $2) ORDER BY event_id, attempt_number`,
    [endpointId, eventId ?? null],
  );
  return rows;
}

/** The request as `standardwebhooks` verifies it: the body received, under the headers received. */
async function verified(endpointId: string, hit: Hit): Promise<unknown> {
  const { secret } = (await sys.request("GET", `/v3/endpoints/${endpointId}/secret`)).body;
  return new Webhook(secret).verify(hit.body, {
    "webhook-id": String(hit.headers["webhook-id"]),
    "webhook-timestamp": String(hit.headers["webhook-timestamp"]),
    "webhook-signature": String(hit.headers["webhook-signature"]),
  });
}

describe("a transformation", () => {
  const f = () => fixtures(sys, receiver);

  it("reshapes the payload and adds headers: the receiver gets its body, signed over it, and the attempt records it", async () => {
    const source = `function handler(webhook) {
  webhook.payload = {
    kind: webhook.event_type,
    cents: webhook.payload.data.amount * 100,
    tenant: webhook.headers["x-tenant"],
  };
  webhook.headers["x-shape"] = "v2";
  return webhook;
}`;
    const url = `${hooks.url}/reshaped`;
    const ep = await endpoint(url, source, "acme", { headers: { "X-Tenant": "acme" } });
    const eventId = await f().send("invoice.paid", { amount: 12 });
    await expect.poll(() => hooks.at("/reshaped").length, { timeout: 15_000 }).toBe(1);
    const [hit] = hooks.at("/reshaped");
    expect(hit!.method).toBe("POST");
    expect(hit!.headers).toMatchObject({
      "webhook-id": eventId,
      "x-tenant": "acme",
      "x-shape": "v2",
      "content-type": "application/json",
    });
    expect(await verified(ep, hit!)).toEqual({ kind: "invoice.paid", cents: 1200, tenant: "acme" });

    await expect.poll(() => f().status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    const [attempt] = await attempts(ep, eventId);
    expect(attempt).toMatchObject({
      status: "succeeded",
      request_method: "POST",
      request_url: url,
      request_body: hit!.body,
    });
    // What the transformation set is recorded by name, its value redacted as a custom header's.
    expect(attempt!.request_headers).toMatchObject({ "x-shape": "[redacted]", "x-tenant": "[redacted]" });
    // And the API shows the request as it was sent.
    const shown = await sys.request("GET", `/v3/attempts/${attempt!.id}`);
    expect(shown.body.request).toMatchObject({ method: "POST", url, body: hit!.body, transformed: true });
  });

  it("changes the method and the URL: the request goes as PUT to another receiver, signed", async () => {
    const moved = `${hooks.url}/moved?from=herald`;
    const source = `function handler(webhook) {
  webhook.method = "PUT";
  webhook.url = ${JSON.stringify(moved)};
  webhook.payload = { id: webhook.event_id, data: webhook.payload.data };
  return webhook;
}`;
    const ep = await endpoint(`${receiver.url}/original`, source);
    const eventId = await f().send("invoice.paid", { amount: 7 });
    await expect.poll(() => hooks.at("/moved").length, { timeout: 15_000 }).toBe(1);
    const [hit] = hooks.at("/moved");
    expect(hit).toMatchObject({ method: "PUT", url: "/moved?from=herald" });
    expect(await verified(ep, hit!)).toEqual({ id: eventId, data: { amount: 7 } });
    await expect.poll(() => f().status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    expect(receiver.received("/original")).toEqual([]);
    expect(await attempts(ep, eventId)).toMatchObject([
      { status: "succeeded", request_method: "PUT", request_url: moved, request_body: hit!.body },
    ]);
  });

  it("cancels a delivery: it ends cancelled with no request made, while the endpoint's others go", async () => {
    const source = `function handler(webhook) {
  if (webhook.payload.data.amount < 100) webhook.cancel = true;
  return webhook;
}`;
    const ep = await endpoint(`${hooks.url}/filtered`, source);
    const small = await f().send("invoice.paid", { amount: 5 });
    const large = await f().send("invoice.paid", { amount: 500 });
    await expect.poll(() => f().status(small, ep), { timeout: 15_000 }).toBe("cancelled");
    await expect.poll(() => f().status(large, ep), { timeout: 15_000 }).toBe("succeeded");
    const received = hooks.at("/filtered");
    expect(received.map((h) => h.headers["webhook-id"])).toEqual([large]);
    expect(await verified(ep, received[0]!)).toMatchObject({ data: { amount: 500 } });
    // Final: no retry is scheduled, and its one attempt made no request.
    expect(await f().delivery(small, ep)).toMatchObject({ status: "cancelled", next_attempt_at: null });
    expect(await attempts(ep, small)).toMatchObject([
      { attempt_number: 1, status: "cancelled", error: null, response_body: null, request_method: null },
    ]);
    const listed = await f().attempts(`endpoint=${ep}`);
    expect(listed.map((a) => a.status).sort()).toEqual(["cancelled", "succeeded"]);
  });
});

/** Hostile handlers: each its own endpoint, each with what its failure must say. */
const HOSTILE: [name: string, source: string, says: RegExp][] = [
  [
    "loop",
    "function handler(webhook) {\n  while (true) {}\n}",
    /^the transformation ran past its 50 ms budget/,
  ],
  [
    "memory",
    'function handler(webhook) {\n  let s = "x";\n  for (;;) s += s;\n}',
    // Memory, or time when a loaded machine makes its doublings slower than the budget.
    /^the transformation (used more than its 16 MB of memory|ran past its 50 ms budget) \(line 3\)$/,
  ],
  [
    // A native call QuickJS cannot interrupt (seconds of JSON.stringify): its worker is ended
    // and replaced.
    "native",
    'function handler(webhook) {\n  const o = {};\n  for (let i = 0; i < 100; i++) o["k" + i] = undefined;\n  webhook.payload = JSON.stringify(Array(300000).fill(o)).length;\n  return webhook;\n}',
    /^the transformation ran past its 50 ms budget/,
  ],
  [
    // Typed arrays are not there: QuickJS would keep their bytes outside the memory limit.
    "buffers",
    "function handler(webhook) {\n  const hoard = [];\n  for (;;) hoard.push(new ArrayBuffer(1 << 20));\n}",
    /^ReferenceError: 'ArrayBuffer' is not defined \(line 3\)$/,
  ],
  [
    "process",
    "function handler(webhook) {\n  process.exit(1);\n}",
    /^ReferenceError: 'process' is not defined \(line 2\)$/,
  ],
  [
    "require",
    'function handler(webhook) {\n  const fs = require("fs");\n  return webhook;\n}',
    /^ReferenceError: 'require' is not defined \(line 2\)$/,
  ],
  [
    "globalThis",
    'function handler(webhook) {\n  globalThis.process.mainModule.require("child_process");\n}',
    /^TypeError: cannot read property 'mainModule' of undefined \(line 2\)$/,
  ],
  [
    "fetch",
    'function handler(webhook) {\n  fetch("http://127.0.0.1:9/");\n  return webhook;\n}',
    /^ReferenceError: 'fetch' is not defined \(line 2\)$/,
  ],
  [
    "timers",
    "function handler(webhook) {\n  setTimeout(() => {}, 0);\n  return webhook;\n}",
    /^ReferenceError: 'setTimeout' is not defined \(line 2\)$/,
  ],
  [
    "invalid",
    "function handler(webhook) {\n  return 42;\n}",
    /returned number; it must return the webhook object/,
  ],
];

describe("hostile code", () => {
  it("fails only its own attempts, as transformation_error naming the cause and line, while a neighbour's deliveries arrive", async () => {
    await setupApp(sys, [], "hostile");
    await setupApp(sys, [], "neighbour");
    const hostile = fixtures(sys, receiver, "hostile");
    const neighbour = fixtures(sys, receiver, "neighbour");
    const endpoints = new Map<string, string>();
    for (const [name, source] of HOSTILE)
      endpoints.set(name, await endpoint(`${hooks.url}/hostile-${name}`, source, "hostile"));
    const events = await Promise.all(Array.from({ length: 3 }, () => hostile.send("invoice.paid")));
    const statuses = () =>
      Promise.all(
        [...endpoints.values()].flatMap((ep) => events.map((eventId) => hostile.status(eventId, ep))),
      );
    const all = (status: string) => [...endpoints.values()].flatMap(() => events.map(() => status));
    // Every hostile delivery failed once before the neighbour sends: their retries go on beside it.
    await expect.poll(statuses, { timeout: 20_000 }).toEqual(all("retrying"));

    // The neighbour: a plain endpoint, and one whose own transformation shares the workers.
    const plain = await neighbour.endpoint("/neighbour-plain");
    const benign = await endpoint(
      `${hooks.url}/neighbour-benign`,
      'function handler(webhook) {\n  webhook.headers["x-benign"] = "1";\n  return webhook;\n}',
      "neighbour",
    );
    const sent = await Promise.all(Array.from({ length: 5 }, () => neighbour.send("invoice.paid", { n: 1 })));
    for (const eventId of sent)
      for (const ep of [plain, benign])
        await expect.poll(() => neighbour.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    // Every neighbour delivery arrived while the hostile ones still had retries to come.
    expect(await statuses()).toEqual(all("retrying"));
    expect(receiver.received("/neighbour-plain")).toHaveLength(5);
    const benignHits = hooks.at("/neighbour-benign");
    expect(benignHits).toHaveLength(5);
    for (const hit of benignHits) {
      expect(hit.headers["x-benign"]).toBe("1");
      expect(await verified(benign, hit)).toMatchObject({ data: { n: 1 } });
    }

    // Then each hostile delivery ran out its schedule (four attempts), each attempt failed as its
    // code deserves, and not one request left for it.
    await expect.poll(statuses, { timeout: 30_000 }).toEqual(all("failed"));
    for (const [name, , says] of HOSTILE) {
      const rows = await attempts(endpoints.get(name)!);
      expect(rows.map((r) => r.attempt_number).sort(), name).toEqual(
        events.flatMap(() => [1, 2, 3, 4]).sort(),
      );
      for (const row of rows) {
        expect(row, name).toMatchObject({
          status: "failed",
          error: "transformation_error",
          request_method: null,
        });
        expect(row.response_body, name).toMatch(says);
      }
      expect(hooks.at(`/hostile-${name}`), name).toEqual([]);
    }
    // The sender counts what its workers did: the native call's ended theirs.
    const { port } = sys.senders[0]!.healthServer()!.address() as AddressInfo;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const work = (kind: string) =>
      Number(
        new RegExp(`^herald_transformation_work\\{[^}]*kind="${kind}"[^}]*\\} (\\d+)$`, "m").exec(
          metrics,
        )?.[1],
      );
    // Each hostile run failed in its worker but the one whose result was read as no request.
    expect(work("failures")).toBeGreaterThanOrEqual((HOSTILE.length - 1) * events.length * 4);
    expect(work("workers_replaced")).toBeGreaterThanOrEqual(events.length * 4);
  });
});
