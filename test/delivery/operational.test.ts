import { createServer, type Server } from "node:http";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntilHandled } from "../support/consumers.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { openapi } from "../support/openapi.ts";
import { deadPort } from "../support/ports.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Operational webhooks end to end: the account's own endpoints are told, signed and retried like
 * any delivery, when a customer's endpoint is disabled (by hand or by a 410), paused and
 * recovered, when a delivery runs out of retries and when a replay completes; never about an
 * operational endpoint itself, never another account's, and nothing is stored where no endpoint
 * would receive it.
 */
type Told = { type: string; timestamp: string; data: Record<string, unknown> & { endpoint: string } };
type Stored = Told & { id: string };

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
let opsEndpoint: string;
let opsApp: string;
let webhook: Webhook;
const servers: Server[] = [];

beforeAll(async () => {
  sys = await startSystem({
    RETRY_SCHEDULE: "1s,1s",
    ENDPOINT_PROBE_AFTER: "1s",
    ENDPOINT_BREAKER_AFTER: "2",
  });
  receiver = await startReceiver();
  f = fixtures(sys, receiver);
  await setupApp(sys, ["order.placed"]);
  const res = await sys.request("POST", "/v3/operational-endpoints", {
    json: { url: `${receiver.url}/ops` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  opsEndpoint = res.body.id;
  opsApp = res.body.app;
  const secret = (await sys.request("GET", `/v3/endpoints/${opsEndpoint}/secret`)).body.secret;
  webhook = new Webhook(secret);
});
afterAll(async () => {
  await sys?.close();
  await receiver?.close();
  for (const s of servers) s.closeAllConnections();
});

/** What the operational endpoint was told, each verified with the standardwebhooks package. */
function told(): Told[] {
  return receiver.received("/ops").map((r) => {
    const headers = {
      "webhook-id": String(r.headers["webhook-id"]),
      "webhook-timestamp": String(r.headers["webhook-timestamp"]),
      "webhook-signature": String(r.headers["webhook-signature"]),
    };
    return webhook.verify(r.body, headers) as Told;
  });
}

const toldOf = (type: string, endpoint: string) =>
  told().filter((t) => t.type === type && t.data.endpoint === endpoint);

async function waitTold(type: string, endpoint: string): Promise<Told> {
  await expect
    .poll(() => toldOf(type, endpoint).length, { timeout: 20_000, interval: 200 })
    .toBeGreaterThan(0);
  return toldOf(type, endpoint)[0]!;
}

/** The notices stored about an endpoint (written in the transaction of the change, so complete at once). */
async function storedAbout(endpoint: string, type?: string): Promise<Stored[]> {
  const res = await sys.request("GET", `/v3/events?app=${opsApp}&limit=100`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as Stored[]).filter(
    (e) => e.data.endpoint === endpoint && (!type || e.type === type),
  );
}

/**
 * Waits until every notice stored about `endpoint` (of `type`) has been delivered to the
 * operational endpoint. Then `told` holds all it will ever be told of them: a delivery that ended
 * is attempted no more, and the receiver records a request before it answers. Call it once every
 * change that could store one is known to have committed.
 */
async function waitAllTold(endpoint: string, type: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const undelivered: string[] = [];
        for (const n of await storedAbout(endpoint, type))
          if ((await f.status(n.id, opsEndpoint)) !== "succeeded") undelivered.push(n.id);
        return undelivered;
      },
      { timeout: 20_000, interval: 200 },
    )
    .toEqual([]);
}

const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);

/** A notice's body against its type's schema in the OpenAPI document's `webhooks`. */
function expectDocumented(notice: Told): void {
  const hook = (
    openapi.webhooks as Record<
      string,
      { post: { requestBody: { content: Record<string, { schema: object }> } } }
    >
  )[notice.type];
  expect(hook, notice.type).toBeDefined();
  const validate = ajv.compile(hook!.post.requestBody.content["application/json"]!.schema);
  const ok = validate(notice);
  expect(ok ? [] : validate.errors, JSON.stringify(notice)).toEqual([]);
}

describe("operational endpoints", () => {
  it("are made in an app of their own, listed apart, with Herald's types only", async () => {
    const list = await sys.request("GET", "/v3/operational-endpoints");
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([opsEndpoint]);
    const apps = await sys.request("GET", "/v3/apps");
    expect(apps.body.data.map((a: { id: string }) => a.id)).not.toContain(opsApp);
    expect(
      (await sys.request("GET", "/v3/endpoints")).body.data.map((e: { id: string }) => e.id),
    ).not.toContain(opsEndpoint);
    expect(
      (await sys.request("GET", `/v3/endpoints?app=${opsApp}`)).body.data.map((e: { id: string }) => e.id),
    ).toEqual([opsEndpoint]);

    const types = await sys.request("GET", "/v3/operational-event-types");
    expect(types.body.data.map((t: { name: string }) => t.name).sort()).toEqual(
      [
        "delivery.exhausted",
        "endpoint.disabled",
        "endpoint.paused",
        "endpoint.recovered",
        "replay.completed",
      ].sort(),
    );
    expect(types.body.data[0].schema.type).toBe("object");

    const badType = await sys.request("POST", "/v3/operational-endpoints", {
      json: { url: `${receiver.url}/ops2`, event_types: ["endpoint.disabled", "order.placed"] },
    });
    expect(badType.status).toBe(400);
    expect(badType.body.error.param).toBe("event_types[1]");

    // Nobody sends into it, nor makes endpoints in it, nor deletes it through the app routes.
    const send = await sys.request("POST", "/v3/events", {
      json: { app: opsApp, type: "endpoint.disabled", data: { endpoint: "ep_fake" } },
    });
    expect(send.status).toBe(400);
    expect(send.body.error).toMatchObject({ code: "operational_app", param: "app" });
    const viaEndpoints = await sys.request("POST", "/v3/endpoints", {
      json: { app: opsApp, url: receiver.url },
    });
    expect(viaEndpoints.body.error).toMatchObject({ code: "operational_app", param: "app" });
    expect((await sys.request("DELETE", `/v3/apps/${opsApp}`)).status).toBe(400);
  });

  it("are told when a delivery runs out of retries, then when its replay completes", async () => {
    receiver.on("/failing", { status: 500 });
    const ep = await f.endpoint("/failing");
    const event = await f.send("order.placed");
    const exhausted = await waitTold("delivery.exhausted", ep);
    expect(exhausted.data).toMatchObject({
      app: expect.stringMatching(/^app_/),
      app_uid: "acme",
      url: `${receiver.url}/failing`,
      event,
      event_type: "order.placed",
      attempts: 3,
      last_attempt: { response_status: 500, error: "http_error" },
    });
    expect(await f.status(event, ep)).toBe("failed");

    receiver.on("/failing", {});
    const replay = await sys.request("POST", `/v3/endpoints/${ep}/replay`, { json: {} });
    expect(replay.body.queued).toBe(1);
    const completed = await waitTold("replay.completed", ep);
    expect(completed.data).toMatchObject({ replay: replay.body.id, queued: 1 });
  });

  it("are told of an endpoint disabled by hand, and by a 410 Gone", async () => {
    const byHand = await f.endpoint("/byhand");
    await sys.request("POST", `/v3/endpoints/${byHand}`, { json: { disabled: true } });
    expect((await waitTold("endpoint.disabled", byHand)).data).toMatchObject({ trigger: "manual" });

    receiver.on("/gone", { status: 410 });
    const gone = await f.endpoint("/gone");
    await f.send("order.placed");
    const disabled = await waitTold("endpoint.disabled", gone);
    expect(disabled.data).toMatchObject({ trigger: "automatic", reason: expect.stringMatching(/410 Gone/) });
    // Disabled, not exhausted: its delivery ended with the endpoint, which is told once. The
    // notices are stored in the transaction of the change, so the log is complete already.
    const stored = await sys.request("GET", `/v3/events?app=${opsApp}&limit=100`);
    const aboutGone = stored.body.data.filter(
      (e: { data: { endpoint: string } }) => e.data.endpoint === gone,
    );
    expect(aboutGone.map((e: { type: string }) => e.type)).toEqual(["endpoint.disabled"]);
  });

  it("are told once when an endpoint stops answering, and when it answers again", async () => {
    const port = await deadPort();
    const ep = await f.endpoint("", { url: `http://127.0.0.1:${port}/down` });
    await f.send("order.placed");
    await f.send("order.placed");
    const paused = await waitTold("endpoint.paused", ep);
    expect(paused.data).toMatchObject({ reason: "not_responding" });
    // A failed probe later, still one pause told. The breaker opened at the second failed attempt,
    // so a third is made after it (the probe), and what a failure tells is stored in the
    // transaction that records it (failedResults.ts): once it shows failed, every pause about ep is stored.
    await expect
      .poll(async () => (await f.attempts(`endpoint=${ep}&status=failed`)).length, { timeout: 20_000 })
      .toBeGreaterThanOrEqual(3);
    await waitAllTold(ep, "endpoint.paused");
    expect(toldOf("endpoint.paused", ep)).toHaveLength(1);

    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    const recovered = await waitTold("endpoint.recovered", ep);
    expect(recovered.data).toMatchObject({ trigger: "automatic" });
    expectDocumented(recovered);
    expect(Date.parse(String(recovered.data.recovered_at))).toBeGreaterThan(
      Date.parse(String(paused.data.paused_at)),
    );
  });

  it("are never told about an operational endpoint itself", async () => {
    const res = await sys.request("POST", "/v3/operational-endpoints", {
      json: { url: `${receiver.url}/ops-broken`, event_types: ["endpoint.disabled"] },
    });
    const broken = res.body.id;
    receiver.on("/ops-broken", { status: 410 });
    const ep = await f.endpoint("/another-by-hand");
    await sys.request("POST", `/v3/endpoints/${ep}`, { json: { disabled: true } });
    // The broken one got the notice, answered 410 and was disabled: nobody is told of that.
    await expect
      .poll(async () => (await sys.request("GET", `/v3/endpoints/${broken}`)).body.disabled, {
        timeout: 15_000,
      })
      .toBe(true);
    // No wait: a notice about it would have been stored in the transaction that disabled it
    // (failedResults.ts), which the poll above saw committed.
    const events = await sys.request("GET", `/v3/events?app=${opsApp}&limit=100`);
    const about = events.body.data.map((e: { data: { endpoint: string } }) => e.data.endpoint);
    expect(about).toContain(ep);
    expect(about).not.toContain(broken);
    expect(about).not.toContain(opsEndpoint);
  });

  it("tell one account nothing of another's, and store nothing no endpoint would receive", async () => {
    const other = await sys.newAccount("other");
    const as = (method: string, path: string, json?: unknown) =>
      sys.request(method, path, { key: other, ...(json ? { json } : {}) });
    await as("POST", "/v3/apps", { uid: "beta", name: "beta" });
    await as("POST", "/v3/event-types", { name: "order.placed" });
    const ops = await as("POST", "/v3/operational-endpoints", {
      url: `${receiver.url}/ops-other`,
      event_types: ["endpoint.disabled"],
    });
    const ep = (await as("POST", "/v3/endpoints", { app: "beta", url: `${receiver.url}/other-failing` })).body
      .id;
    receiver.on("/other-failing", { status: 500 });
    const event = (await as("POST", "/v3/events", { app: "beta", type: "order.placed", data: {} })).body.id;
    const statuses = async (id: string): Promise<string[]> =>
      (await as("GET", `/v3/events/${id}`)).body.deliveries.map((d: { status: string }) => d.status);
    await expect
      .poll(async () => (await as("GET", `/v3/attempts?endpoint=${ep}`)).body.data.length, {
        timeout: 15_000,
      })
      .toBe(3);
    // Its retries run out before it is disabled, so that there is an exhausted delivery to tell
    // of. What a delivery's end tells is stored in the transaction that ends it (failedResults.ts), and the
    // disable's before its request is answered: once the delivery shows failed and the disable is
    // answered, every notice about ep is stored. Once each of those has been delivered wherever it
    // goes, all they told anyone has been received.
    await expect.poll(() => statuses(event), { timeout: 15_000 }).toEqual(["failed"]);
    await as("POST", `/v3/endpoints/${ep}`, { disabled: true });
    await expect.poll(() => receiver.received("/ops-other").length, { timeout: 15_000 }).toBe(1);
    const open = async (id: string) =>
      (await statuses(id)).filter((s) => s === "pending" || s === "retrying");
    const stored = await as("GET", `/v3/events?app=${ops.body.app}`);
    for (const notice of stored.body.data as Stored[])
      await expect.poll(() => open(notice.id), { timeout: 15_000 }).toEqual([]);
    // Its operational endpoint takes endpoint.disabled only: the exhausted delivery was not stored.
    expect(stored.body.data.map((e: { type: string }) => e.type)).toEqual(["endpoint.disabled"]);
    expect(await storedAbout(ep)).toEqual([]);
    expect(told().filter((t) => t.data.endpoint === ep)).toEqual([]);
  });
});

describe("operational endpoints' test events", () => {
  it("are of an ordinary type, never one of Herald's own", async () => {
    // The account may name a type of its own as Herald names a notice: the operational app never takes it.
    const own = await sys.request("POST", "/v3/event-types", { json: { name: "endpoint.disabled" } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);

    const forged = await sys.request("POST", `/v3/endpoints/${opsEndpoint}/test`, {
      json: { type: "endpoint.disabled", data: { endpoint: "ep_fake", trigger: "manual" } },
    });
    expect(forged.status, JSON.stringify(forged.body)).toBe(400);
    expect(forged.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "operational_type",
      param: "type",
    });

    // Without `type`: an ordinary one (not the account's first by name, which is Herald's).
    const test = await sys.request("POST", `/v3/endpoints/${opsEndpoint}/test`, { json: {} });
    expect(test.status, JSON.stringify(test.body)).toBe(201);
    expect(test.body).toMatchObject({ object: "event", app: opsApp, type: "order.placed" });
    await expect
      .poll(() => receiver.received("/ops").filter((r) => r.headers["webhook-id"] === test.body.id).length, {
        timeout: 10_000,
      })
      .toBe(1);

    // One that takes some of Herald's types only still gets an ordinary test event, and no forged one.
    const filtered = await sys.request("POST", "/v3/operational-endpoints", {
      json: { url: `${receiver.url}/ops-filtered`, event_types: ["endpoint.disabled"] },
    });
    expect(filtered.status, JSON.stringify(filtered.body)).toBe(201);
    for (const type of ["endpoint.disabled", "endpoint.paused"]) {
      const refused = await sys.request("POST", `/v3/endpoints/${filtered.body.id}/test`, { json: { type } });
      expect(refused.status, `${type}: ${JSON.stringify(refused.body)}`).toBe(400);
      expect(refused.body.error.param).toBe("type");
    }
    const ordinary = await sys.request("POST", `/v3/endpoints/${filtered.body.id}/test`, { form: {} });
    expect(ordinary.status, JSON.stringify(ordinary.body)).toBe(201);
    expect(ordinary.body.type).toBe("order.placed");
    await expect
      .poll(() => f.status(ordinary.body.id, filtered.body.id), { timeout: 10_000 })
      .toBe("succeeded");
    expect(receiver.received("/ops-filtered").map((r) => JSON.parse(r.body).type)).toEqual(["order.placed"]);
    await sys.request("DELETE", `/v3/endpoints/${filtered.body.id}`);

    // An ordinary endpoint takes the account's own type of that name, as before.
    const customer = await f.endpoint("/own-type");
    const allowed = await sys.request("POST", `/v3/endpoints/${customer}/test`, {
      json: { type: "endpoint.disabled" },
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
    expect(allowed.body.app).not.toBe(opsApp);
  });
});

describe("endpoints' health", () => {
  it("leaves the operational endpoints out unless their app is named", async () => {
    const customer = await f.endpoint("/health-listed");
    const all = await sys.request("GET", "/v3/stats/endpoints?limit=100");
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    const listed = all.body.data.map((h: { endpoint: string }) => h.endpoint);
    expect(listed).toContain(customer);
    expect(listed).not.toContain(opsEndpoint);
    expect(all.body.data.map((h: { app: string }) => h.app)).not.toContain(opsApp);

    const named = await sys.request("GET", `/v3/stats/endpoints?app=${opsApp}&limit=100`);
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect(named.body.data.map((h: { endpoint: string }) => h.endpoint)).toContain(opsEndpoint);
    expect(named.body.data.map((h: { app: string }) => h.app)).toEqual(named.body.data.map(() => opsApp));
  });
});

describe("changes made through the API at once", () => {
  const update = (id: string, json: Record<string, unknown>) =>
    sys.request("POST", `/v3/endpoints/${id}`, { json });

  it("tell a manual disable once, however many requests make it", async () => {
    const ep = await f.endpoint("/disabled-at-once");
    const replies = await Promise.all(Array.from({ length: 8 }, () => update(ep, { disabled: true })));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(replies.every((r) => r.body.disabled)).toBe(true);
    expect(await storedAbout(ep, "endpoint.disabled")).toHaveLength(1);
    await waitTold("endpoint.disabled", ep);
    // The requests have all been answered, so the one notice stored is all there is; once its
    // delivery has ended, no attempt of it is made again.
    await waitAllTold(ep, "endpoint.disabled");
    expect(toldOf("endpoint.disabled", ep)).toHaveLength(1);
  });

  it("tell a pause ended by a new URL as a recovery, once", async () => {
    const port = await deadPort();
    const ep = await f.endpoint("", { url: `http://127.0.0.1:${port}/gone-quiet` });
    const held = [await f.send("order.placed"), await f.send("order.placed")];
    await waitTold("endpoint.paused", ep);
    expect(await storedAbout(ep, "endpoint.recovered")).toEqual([]);

    const replies = await Promise.all(
      Array.from({ length: 4 }, () => update(ep, { url: `${receiver.url}/moved` })),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(replies.every((r) => r.body.delivery_state.state !== "paused")).toBe(true);
    const stored = await storedAbout(ep, "endpoint.recovered");
    expect(stored).toHaveLength(1);
    expect(stored[0]!.data).toMatchObject({ trigger: "manual", url: `${receiver.url}/moved` });

    const recovered = await waitTold("endpoint.recovered", ep);
    expectDocumented(recovered);
    // The held deliveries go to the new URL; that answer closes no breaker, so nothing more is told.
    await expect.poll(() => receiver.received("/moved").length, { timeout: 10_000 }).toBe(2);
    // A recovery those answers told would be stored by the handler of their results, just after
    // it records them (resultStatements.ts: a statement of its own). Recorded, the results are in the
    // dispatchers' hands or handled; once those hold no result, every notice about ep is stored.
    await expect
      .poll(() => Promise.all(held.map((event) => f.status(event, ep))), { timeout: 10_000 })
      .toEqual(["succeeded", "succeeded"]);
    const brokers = sys.dispatchers.map((d) => d.deps.broker);
    const { queues } = brokers[0]!.topology;
    await waitUntilHandled(brokers, [queues.dispatcherResults, queues.dispatcherResultBatches]);
    await waitAllTold(ep, "endpoint.recovered");
    expect(toldOf("endpoint.recovered", ep)).toHaveLength(1);
    expect(await storedAbout(ep, "endpoint.recovered")).toHaveLength(1);
  });

  it("tell an endpoint enabled again as a recovery, once; a new URL of a healthy one not at all", async () => {
    const ep = await f.endpoint("/enabled-again");
    await update(ep, { disabled: true });
    const replies = await Promise.all(Array.from({ length: 6 }, () => update(ep, { disabled: false })));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    const stored = await storedAbout(ep, "endpoint.recovered");
    expect(stored).toHaveLength(1);
    expect(stored[0]!.data).toMatchObject({ trigger: "manual" });

    const healthy = await f.endpoint("/healthy-before");
    expect((await update(healthy, { url: `${receiver.url}/healthy-after` })).status).toBe(200);
    // Enabling one that was not disabled ends nothing either.
    expect((await update(healthy, { disabled: false })).status).toBe(200);
    expect(await storedAbout(healthy)).toEqual([]);
  });
});
