import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";
import { type Seeder, seeder } from "../support/seed.ts";

/**
 * Endpoints' transformations through the API: compiled when saved (a syntax error is a 400
 * naming its line), shown on the endpoint, removed with null, and tried before saving on an
 * event type's example or a given event, on the gateway's transformation workers.
 */
let gw: TestGateway;
let endpoint: string;
let otherEndpoint: string;
let seed: Seeder;
const { open, as, portal } = browserSessions(() => gw);

// A budget long enough that an endless loop is plainly still running while other requests are
// answered, and that no fair run on a loaded machine comes near it.
const BUDGET_MS = 1000;
const SLACK = `function handler(webhook) {
  webhook.payload = { text: "Invoice paid: " + webhook.payload.data.amount + " by " + webhook.payload.data.customer };
  webhook.headers["x-source"] = "herald";
  return webhook;
}`;

beforeAll(async () => {
  // No rate of compiles and try-its (transformationLimits.test.ts has it): these make a dozen in a row.
  gw = await startGateway({
    TRANSFORMATION_TIMEOUT: `${BUDGET_MS}ms`,
    TRANSFORMATION_RATE_LIMIT_PER_SECOND: "0",
  });
  for (const uid of ["acme", "other"]) await gw.request("POST", "/v3/apps", { json: { uid, name: uid } });
  const schema = {
    type: "object",
    required: ["amount", "customer"],
    properties: {
      amount: { type: "integer", examples: [1200] },
      customer: { type: "string", examples: ["Globex"] },
    },
  };
  expect(
    (await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid", schema } })).status,
  ).toBe(201);
  const made = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: "https://hooks.example.com/in", headers: { "X-Tenant": "t-secret-1" } },
  });
  endpoint = made.body.id;
  otherEndpoint = (
    await gw.request("POST", "/v3/endpoints", {
      json: { app: "other", url: "https://other.example.com/in", transformation: SLACK },
    })
  ).body.id;
});
afterAll(async () => {
  await seed?.close();
  await gw.close();
});

const update = (transformation: unknown, id = endpoint) =>
  gw.request("POST", `/v3/endpoints/${id}`, { json: { transformation } });
const trySaved = (body: Record<string, unknown>, id = endpoint, options = {}) =>
  gw.request("POST", `/v3/endpoints/${id}/transformation/test`, { json: body, ...options });
const tryUnsaved = (body: Record<string, unknown>, options = {}) =>
  gw.request("POST", "/v3/endpoints/transformation/test", { json: body, ...options });

describe("saving a transformation", () => {
  it("keeps valid code, and shows it on the endpoint, retrieved and listed", async () => {
    const res = await update(SLACK);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectMatches(res.body, "Endpoint");
    expect(res.body.transformation).toBe(SLACK);
    expect((await gw.request("GET", `/v3/endpoints/${endpoint}`)).body.transformation).toBe(SLACK);
    const listed = (await gw.request("GET", "/v3/endpoints?app=acme")).body.data;
    expect(listed.find((e: { id: string }) => e.id === endpoint).transformation).toBe(SLACK);
  });

  it("refuses a syntax error with a 400 at transformation naming the line, on create and on update", async () => {
    const broken = "function handler(webhook) {\n  return webhook +;\n}";
    const created = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://hooks.example.com/broken", transformation: broken },
    });
    const updated = await update(broken);
    for (const res of [created, updated]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "transformation_invalid", param: "transformation" });
      expect(res.body.error.message).toMatch(/^SyntaxError: .+ \(line 2\)$/);
    }
    // The saved one stays.
    expect((await gw.request("GET", `/v3/endpoints/${endpoint}`)).body.transformation).toBe(SLACK);
  });

  it("refuses more than 65,536 bytes of UTF-8, fewer characters though they are", async () => {
    const source = `function handler(w) { return w; }\n// ${"é".repeat(33_000)}`;
    expect(source.length).toBeLessThan(65_536);
    const res = await update(source);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: "transformation" });
    expect(res.body.error.message).toContain("at most 65536");
  });

  it("refuses code with no handler, and code whose top level throws, naming the line", async () => {
    expect((await update("var x = 1;")).body.error).toMatchObject({ param: "transformation" });
    const throws = await update("function handler(w) { return w; }\nnull.x;");
    expect(throws.status).toBe(400);
    expect(throws.body.error.message).toMatch(/^TypeError: .+ \(line 2\)$/);
    // A top level that never ends is refused too, once a second try has run out its budget.
    const loops = await update("function handler(w) { return w; }\nwhile (true) {}");
    expect(loops.status).toBe(400);
    expect(loops.body.error.message).toContain(`${BUDGET_MS} ms budget`);
  });

  it("removes it with null", async () => {
    const other = await update(null, otherEndpoint);
    expect(other.status).toBe(200);
    expect(other.body.transformation).toBeNull();
    expect((await gw.request("GET", `/v3/endpoints/${otherEndpoint}`)).body.transformation).toBeNull();
    expect((await update(SLACK, otherEndpoint)).body.transformation).toBe(SLACK);
  });
});

describe("trying a transformation", () => {
  it("runs the saved one on an event type's example, and says what would be sent", async () => {
    const res = await trySaved({ event_type: "invoice.paid" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectMatches(res.body, "TransformationTest");
    expect(res.body).toMatchObject({
      object: "transformation_test",
      cancelled: false,
      error: null,
      request: {
        method: "POST",
        url: "https://hooks.example.com/in",
        headers: { "x-tenant": "[redacted]", "x-source": "herald" },
        body: JSON.stringify({ text: "Invoice paid: 1200 by Globex" }),
      },
    });
    // Handler received the body Herald would send, built as the sender builds it.
    expect(res.body.input).toMatchObject({
      event_type: "invoice.paid",
      event_id: expect.stringMatching(/^evt_/),
      method: "POST",
      payload: { type: "invoice.paid", data: { amount: 1200, customer: "Globex" } },
    });
  });

  it("never lets a saved header's value out: the run sees it redacted", async () => {
    const copy =
      "function handler(w) { w.payload = { copied: w.headers['x-tenant'] }; w.url += '?t=' + w.headers['x-tenant']; return w; }";
    const res = await trySaved({ event_type: "invoice.paid", transformation: copy });
    expect(res.body.request.body).toBe(JSON.stringify({ copied: "[redacted]" }));
    expect(JSON.stringify(res.body)).not.toContain("t-secret-1");
  });

  it("runs an edit not saved yet on a given event: it may cancel, or change the method and URL", async () => {
    const cancelSmall =
      "function handler(w) {\n  if (w.payload.data.amount < 100) w.cancel = true;\n  return w;\n}";
    const small = await trySaved({
      transformation: cancelSmall,
      event: { type: "invoice.paid", data: { amount: 5, customer: "Initech" } },
    });
    expect(small.body).toMatchObject({ cancelled: true, request: null, error: null });
    const put =
      "function handler(w) { w.method = 'PUT'; w.url = 'https://elsewhere.example.com/x'; return w; }";
    const moved = await trySaved({
      transformation: put,
      event: { type: "anything.at.all", data: { a: [1, 2] } },
    });
    expect(moved.body.request).toMatchObject({ method: "PUT", url: "https://elsewhere.example.com/x" });
    expect(JSON.parse(moved.body.request.body)).toMatchObject({
      type: "anything.at.all",
      data: { a: [1, 2] },
    });
    // The saved one did not change.
    expect((await gw.request("GET", `/v3/endpoints/${endpoint}`)).body.transformation).toBe(SLACK);
  });

  it("tries one for an endpoint not made yet, with its URL and headers", async () => {
    const res = await tryUnsaved({
      app: "acme",
      url: "https://new.example.com/hook",
      headers: { "X-Team": "billing" },
      transformation: "function handler(w) { w.payload = w.headers['x-team'] + ' ' + w.url; return w; }",
      event_type: "invoice.paid",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectMatches(res.body, "TransformationTest");
    expect(res.body.request).toMatchObject({
      url: "https://new.example.com/hook",
      body: "billing https://new.example.com/hook",
    });
    const explicit = await tryUnsaved({
      app: "acme",
      url: "https://new.example.com/hook",
      transformation: SLACK,
      event: { type: "invoice.paid", data: { amount: 7, customer: "Hooli" } },
    });
    expect(explicit.body.request.body).toBe(JSON.stringify({ text: "Invoice paid: 7 by Hooli" }));
  });

  it("answers a failing run with its error and line, and refuses what it cannot run", async () => {
    const threw = await trySaved({
      event_type: "invoice.paid",
      transformation: "function handler(w) {\n\n  return w.payload.nope.deeper;\n}",
    });
    expect(threw.status).toBe(200);
    expectMatches(threw.body, "TransformationTest");
    expect(threw.body).toMatchObject({ cancelled: false, request: null });
    expect(threw.body.error).toMatchObject({ kind: "transformation_error", cause: "threw", line: 3 });
    const syntax = await trySaved({ event_type: "invoice.paid", transformation: "function handler(w) {" });
    expect(syntax.body.error).toMatchObject({ cause: "syntax", line: 1 });
    expect((await trySaved({ event_type: "no.such.type" })).body.error).toMatchObject({
      param: "event_type",
    });
    expect((await trySaved({})).body.error).toMatchObject({ param: "event_type" });
    // What the sender refuses of the request made: said as it will say it on each attempt.
    const moves = "function handler(w) { w.url = 'https://elsewhere.example.com/'; return w; }";
    const queue = await tryUnsaved({
      app: "acme",
      url: "amqp://mq.example.com/?exchange=billing&routing_key=paid",
      transformation: moves,
      event_type: "invoice.paid",
    });
    expect(queue.body.error).toMatchObject({
      cause: "invalid",
      message: expect.stringContaining("amqp endpoint"),
    });
    // Its credentials, shown `[redacted]` in the URL the run sees, are not the code's to refuse.
    const reshaped = await tryUnsaved({
      app: "acme",
      url: "amqp://user:pw@mq.example.com/?exchange=billing&routing_key=paid",
      transformation: "function handler(w) { w.payload = { n: 1 }; return w; }",
      event_type: "invoice.paid",
    });
    expect(reshaped.body).toMatchObject({ error: null, request: { body: '{"n":1}' } });
    expect(reshaped.body.request.url).toContain("[redacted]@");
    const oauth2 = { token_url: "https://auth.example.com/token", client_id: "c", client_secret: "s" };
    const withToken = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://api.example.com/in", oauth2 },
    });
    const moved = await trySaved({ transformation: moves, event_type: "invoice.paid" }, withToken.body.id);
    expect(moved.body.error.message).toContain("OAuth2 token may not go");
    const bare = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://bare.example.com" },
    });
    const none = await trySaved({ event_type: "invoice.paid" }, bare.body.id);
    expect(none.body.error).toMatchObject({ param: "transformation" });
  });

  it("stops an endless loop at its budget, while the gateway answers others meanwhile", async () => {
    const neighbour = await gw.newAccount("Neighbour");
    await gw.request("POST", "/v3/apps", { key: neighbour, json: { uid: "n", name: "N" } });
    let loopDone = false;
    const loop = trySaved({
      event_type: "invoice.paid",
      transformation: "function handler(w) { while (true) {} }",
    });
    void loop.then(() => (loopDone = true));
    // Once the loop holds a worker: a read, and another account's try-it on the other worker.
    await new Promise((r) => setTimeout(r, 200));
    const read = await gw.request("GET", `/v3/endpoints/${endpoint}`);
    const theirs = await tryUnsaved(
      {
        app: "n",
        url: "https://n.example.com",
        transformation: "function handler(w) { w.payload = 'fine'; return w; }",
        event: { type: "t", data: {} },
      },
      { key: neighbour },
    );
    expect(read.status).toBe(200);
    expect(theirs.body.request).toMatchObject({ body: "fine" });
    expect(loopDone).toBe(false);
    const looped = await loop;
    expect(looped.status).toBe(200);
    expect(looped.body.error).toMatchObject({ kind: "transformation_error", cause: "timeout" });
    expect(looped.body.error.message).toContain(`${BUDGET_MS} ms budget`);
  });

  it("lets a portal session try its own app's endpoints only", async () => {
    const cookie = await open((await portal({}, "acme")).token);
    const own = await trySaved({ event_type: "invoice.paid" }, endpoint, as(cookie));
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.request.body).toBe(JSON.stringify({ text: "Invoice paid: 1200 by Globex" }));
    expect((await trySaved({ event_type: "invoice.paid" }, otherEndpoint, as(cookie))).status).toBe(404);
    const unsaved = { url: "https://x.example.com", transformation: SLACK, event_type: "invoice.paid" };
    expect((await tryUnsaved({ ...unsaved, app: "acme" }, as(cookie))).status).toBe(200);
    expect((await tryUnsaved({ ...unsaved, app: "other" }, as(cookie))).status).toBe(404);
  });
});

describe("attempts of a transformed endpoint", () => {
  /** An attempt as a sender reports one: seeded, as only the dispatcher writes them. */
  async function attemptOf(status: "succeeded" | "failed" | "cancelled", sent: Record<string, unknown>) {
    seed ??= seeder(gw.databaseUrl);
    const event = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "invoice.paid", data: { amount: 1200, customer: "Globex" } },
    });
    const deliveryId = await seed.delivery({
      eventId: event.body.id,
      endpointId: endpoint,
      status: status === "failed" ? "retrying" : status,
    });
    const id = await seed.attempt({ deliveryId, status, attemptNumber: 1 });
    await seed.prisma.attempt.updateMany({ where: { id }, data: sent });
    return { id, event: event.body.id as string };
  }

  it("show the request the transformation made: its method, URL and body", async () => {
    const body = JSON.stringify({ text: "Invoice paid: 1200 by Globex" });
    const { id, event } = await attemptOf("succeeded", {
      requestMethod: "PUT",
      requestUrl: "https://hooks.slack.test/services/T0",
      requestBody: body,
      requestHeaders: { "content-type": "application/json", "x-source": "[redacted]" },
    });
    const res = await gw.request("GET", `/v3/attempts/${id}`);
    expectMatches(res.body, "AttemptWithRequest");
    expect(res.body.request).toEqual({
      method: "PUT",
      url: "https://hooks.slack.test/services/T0",
      headers: { "content-type": "application/json", "x-source": "[redacted]" },
      body,
      transformed: true,
    });
    // Erasing the event's payload blanks what the transformation made of it too.
    expect((await gw.request("DELETE", `/v3/events/${event}/data`)).status).toBe(200);
    expect((await gw.request("GET", `/v3/attempts/${id}`)).body.request.body).toBeNull();
    const row = await seed.prisma.attempt.findFirstOrThrow({ where: { id } });
    expect(row.requestBody).toBeNull();
  });

  it("show a cancelled attempt with no request, and filter attempts and events by cancelled", async () => {
    const { id, event } = await attemptOf("cancelled", { responseStatus: null, responseBody: null });
    const res = await gw.request("GET", `/v3/attempts/${id}`);
    expectMatches(res.body, "AttemptWithRequest");
    expect(res.body).toMatchObject({ status: "cancelled", error: null, request: null });
    const attempts = await gw.request("GET", "/v3/attempts?status=cancelled");
    expect(attempts.body.data.map((a: { id: string }) => a.id)).toEqual([id]);
    const events = await gw.request("GET", "/v3/events?status=cancelled");
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: { id: string }) => e.id)).toEqual([event]);
  });

  it("show no request for an attempt whose transformation failed or never ran, but one for a failed request", async () => {
    const line = "TypeError: cannot read property 'amount' of undefined (line 2)";
    for (const [error, responseBody] of [
      ["transformation_error", line],
      ["transformation_busy", "every transformation worker was busy"],
    ] as const) {
      // Headers as a sender may have recorded them: still no request, for none was sent.
      const { id } = await attemptOf("failed", {
        error,
        responseStatus: null,
        responseBody,
        requestHeaders: { "content-type": "application/json" },
      });
      const res = await gw.request("GET", `/v3/attempts/${id}`);
      expectMatches(res.body, "AttemptWithRequest");
      expect(res.body, error).toMatchObject({
        status: "failed",
        error,
        response_body: responseBody,
        request: null,
      });
    }
    // A request that was made and failed still shows as sent: Herald's own POST.
    const { id } = await attemptOf("failed", {
      error: "http_error",
      responseStatus: 500,
      requestHeaders: { "content-type": "application/json" },
    });
    const res = await gw.request("GET", `/v3/attempts/${id}`);
    expect(res.body.request).toMatchObject({ method: "POST", transformed: false });
  });
});
