import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OperationalSystem, type Stored, startOperationalSystem } from "../support/operational.ts";
import { deadPort } from "../support/ports.ts";

/**
 * Operational endpoints end to end: made in an app of their own, with Herald's types only; the
 * account's own endpoints are told, signed and retried like any delivery, when a customer's
 * endpoint is disabled (by hand or by a 410), paused and recovered, when a delivery runs out of
 * retries and when a replay completes; never about an operational endpoint itself, never another
 * account's, and nothing is stored where no endpoint would receive it. (Their test events, the
 * health listing and changes made through the API at once: operationalApi.test.ts.)
 */
let sys: OperationalSystem["sys"];
let receiver: OperationalSystem["receiver"];
let f: OperationalSystem["f"];
let opsEndpoint: string;
let opsApp: string;
let told: OperationalSystem["told"];
let toldOf: OperationalSystem["toldOf"];
let waitTold: OperationalSystem["waitTold"];
let storedAbout: OperationalSystem["storedAbout"];
let waitAllTold: OperationalSystem["waitAllTold"];
let expectDocumented: OperationalSystem["expectDocumented"];
let ops: OperationalSystem;
const servers: Server[] = [];

beforeAll(async () => {
  ops = await startOperationalSystem();
  ({
    sys,
    receiver,
    f,
    opsEndpoint,
    opsApp,
    told,
    toldOf,
    waitTold,
    storedAbout,
    waitAllTold,
    expectDocumented,
  } = ops);
});
afterAll(async () => {
  await ops?.close();
  for (const s of servers) s.closeAllConnections();
});

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
