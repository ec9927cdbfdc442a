import { topologyNames } from "@herald/broker";
import { newId } from "@herald/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { drainQueue } from "../support/isolation.ts";
import { expectList, expectMatches } from "../support/openapi.ts";
import { type Seeder, seeder } from "../support/seed.ts";

let gw: TestGateway;
let seed: Seeder;
let appId: string;
const schema = {
  type: "object",
  required: ["invoice_id", "amount"],
  properties: {
    invoice_id: { type: "string", pattern: "^in_" },
    amount: { type: "integer", minimum: 1 },
    currency: { enum: ["eur", "usd"] },
  },
};

beforeAll(async () => {
  gw = await startGateway();
  seed = seeder(gw.databaseUrl);
  appId = (await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).body.id;
  await gw.request("POST", "/v3/event-types", {
    json: { name: "invoice.paid", description: "Paid", schema },
  });
  await gw.request("POST", "/v3/event-types", { json: { name: "user.signed_up" } });
});
afterAll(async () => {
  await seed.close();
  await gw.close();
});

describe.each(["json", "form"] as const)("sending events with %s bodies", (mode) => {
  const send = (values: Record<string, unknown>) =>
    gw.request("POST", "/v3/events", mode === "json" ? { json: values } : { form: values });

  it("stores the event, answers 201 with empty deliveries, and queues it for the dispatcher", async () => {
    const queue = topologyNames(gw.prefix).queues.dispatcherEventBatches;
    await expect.poll(() => gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 5000 }).toBe(0);
    await drainQueue(queue);
    const data = { invoice_id: "in_1", amount: 1200, currency: "eur", nested: { ok: true } };
    const res = await send({ app: "acme", type: "invoice.paid", data });
    expect(res.status).toBe(201);
    expectMatches(res.body, "Event");
    expect(res.body).toMatchObject({
      object: "event",
      app: appId,
      type: "invoice.paid",
      data,
      deliveries: [],
    });
    expect(res.body.id).toMatch(/^evt_/);

    expect((await gw.request("GET", `/v3/events/${res.body.id}`)).body).toEqual(res.body);
    await expect.poll(() => gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 5000 }).toBe(0);
    const messages = await drainQueue(queue);
    expect(messages).toEqual([
      expect.objectContaining({
        name: "events.created.v1",
        body: {
          events: [expect.objectContaining({ event_id: res.body.id, app_id: appId, type: "invoice.paid" })],
        },
      }),
    ]);
  });

  it("rejects data that breaks the schema with a 422 listing each violation, storing nothing", async () => {
    const before = await gw.gateway.deps.prisma.event.count();
    const res = await send({
      app: "acme",
      type: "invoice.paid",
      data: { invoice_id: "x_1", currency: "gbp" },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "schema_validation_failed",
      param: "data",
    });
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: "/amount", message: "is required" },
        { path: "/invoice_id", message: expect.stringContaining("pattern") },
        { path: "/currency", message: expect.stringContaining("allowed values") },
      ]),
    );
    expect(res.body.error.details).toHaveLength(3);
    expect(await gw.gateway.deps.prisma.event.count()).toBe(before);
  });

  it("accepts any object for a type without a schema", async () => {
    const res = await send({ app: appId, type: "user.signed_up", data: { anything: [1, "two", null] } });
    expect(res.status).toBe(201);
  });
});

describe("event rules", () => {
  it("refuses data that PostgreSQL would write out many times larger, and keeps each event's stored size", async () => {
    // 1e308 is 6 characters here and 309 digits as stored: 4,000 of them are 24 KB sent, 1.2 MB kept.
    const wide = await gw.request("POST", "/v3/events", {
      json: { app: appId, type: "user.signed_up", data: { n: Array(4000).fill(1e308) } },
    });
    expect(wide.status).toBe(400);
    expect(wide.body.error.param).toBe("data");
    expect(wide.body.error.message).toMatch(/written out in full/);
    // Its dry run says the same.
    const dry = await gw.request("POST", "/v3/events/dry-run", {
      json: { app: appId, type: "user.signed_up", data: { n: Array(4000).fill(1e308) } },
    });
    expect(dry.status).toBe(400);
    expect(dry.body.error.param).toBe("data");
    const few = { big: 1e308, tiny: 1e-300, some: [1.5e200, -2e-7], text: "1e308 in a string is text" };
    const ok = await gw.request("POST", "/v3/events", {
      json: { app: appId, type: "user.signed_up", data: few },
    });
    expect(ok.status).toBe(201);
    const [row] = await seed.prisma.$queryRawUnsafe<{ stored: number; kept: number }[]>(
      "SELECT octet_length(data::text) AS stored, data_bytes AS kept FROM events WHERE id = $1",
      ok.body.id,
    );
    // The size kept counts every digit PostgreSQL writes (its spaces aside), never fewer.
    expect(row!.kept).toBeGreaterThanOrEqual(row!.stored - 2 * 6);
    expect(row!.kept).toBeGreaterThan(600);
  });

  it("needs an existing, unarchived type and an object payload", async () => {
    const unknown = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "nope.never", data: {} },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe("type");

    await gw.request("POST", "/v3/event-types", { json: { name: "old.thing" } });
    await gw.request("POST", "/v3/event-types/old.thing/archive");
    const archived = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "old.thing", data: {} },
    });
    expect(archived.status).toBe(400);
    expect(archived.body.error).toMatchObject({ code: "event_type_archived", param: "type" });

    const notObject = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "user.signed_up", data: [1] },
    });
    expect(notObject.body.error.param).toBe("data");
    const noApp = await gw.request("POST", "/v3/events", {
      json: { app: "ghost", type: "user.signed_up", data: {} },
    });
    expect(noApp.status).toBe(404);
    expect(noApp.body.error.param).toBe("app");
  });

  it("returns each delivery's status and attempt count with the event", async () => {
    const ep1 = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://a.example.com" } })
    ).body.id;
    const ep2 = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://b.example.com" } })
    ).body.id;
    const event = (
      await gw.request("POST", "/v3/events", { json: { app: "acme", type: "user.signed_up", data: {} } })
    ).body;
    await seed.delivery({ eventId: event.id, endpointId: ep1, status: "succeeded", attempts: 1 });
    await seed.delivery({ eventId: event.id, endpointId: ep2, status: "retrying", attempts: 2 });
    const res = await gw.request("GET", `/v3/events/${event.id}`);
    expectMatches(res.body, "Event");
    expect(res.body.deliveries).toEqual([
      expect.objectContaining({ endpoint: ep1, status: "succeeded", attempts: 1 }),
      expect.objectContaining({ endpoint: ep2, status: "retrying", attempts: 2 }),
    ]);
  });

  it("lists events newest first, filtered by app and type", async () => {
    const other = (await gw.request("POST", "/v3/apps", { json: { name: "Other" } })).body.id;
    const mine = (
      await gw.request("POST", "/v3/events", { json: { app: other, type: "user.signed_up", data: { k: 1 } } })
    ).body.id;
    const byApp = await gw.request("GET", `/v3/events?app=${other}`);
    expectList(byApp.body, "Event");
    expect(byApp.body.data.map((e: { id: string }) => e.id)).toEqual([mine]);
    const byType = await gw.request("GET", "/v3/events?app=acme&type=invoice.paid");
    expect(byType.body.data.every((e: { type: string }) => e.type === "invoice.paid")).toBe(true);
    expect(byType.body.data.length).toBeGreaterThan(0);
    const ids = (await gw.request("GET", "/v3/events?limit=100")).body.data.map((e: { id: string }) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);
  });
});

describe("accepting events together", () => {
  it("commits concurrent events in one batch, failing only the one whose app was deleted meanwhile", async () => {
    const gone = (await gw.request("POST", "/v3/apps", { json: { name: "Gone" } })).body.id as string;
    const kept = (await gw.request("POST", "/v3/apps", { json: { name: "Kept" } })).body.id as string;
    // Both apps are now in the gateway's cache; one is deleted behind its back.
    for (const app of [gone, kept]) {
      expect(
        (await gw.request("POST", "/v3/events", { json: { app, type: "user.signed_up", data: {} } })).status,
      ).toBe(201);
    }
    await gw.gateway.deps.prisma.app.delete({ where: { id: gone } });
    const results = await Promise.all(
      [gone, kept, kept, gone, kept].map((app) =>
        gw.request("POST", "/v3/events", { json: { app, type: "user.signed_up", data: { app } } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([404, 201, 201, 404, 201]);
    expect(results[0]!.body.error).toMatchObject({ code: "resource_missing", param: "app" });
    for (const r of results.filter((x) => x.status === 201)) {
      expect((await gw.request("GET", `/v3/events/${r.body.id}`)).body.data).toEqual({ app: kept });
    }
  });

  it("refuses an event for an app another gateway deleted while this one still has it cached", async () => {
    const app = (await gw.request("POST", "/v3/apps", { json: { name: "Elsewhere" } })).body.id as string;
    const send = () => gw.request("POST", "/v3/events", { json: { app, type: "user.signed_up", data: {} } });
    expect((await send()).status).toBe(201);
    // What a DELETE through another replica does; this gateway's cache still holds the app.
    await gw.gateway.deps.prisma.app.update({
      where: { id: app },
      data: { deletedAt: new Date(), uid: null },
    });
    const refused = await send();
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ code: "resource_missing", param: "app" });
    expect(await gw.gateway.deps.prisma.event.count({ where: { appId: app } })).toBe(1);
  });
});

describe("filtering events by their deliveries", () => {
  type Listed = { data: { id: string }[]; has_more: boolean };
  const ids = (body: Listed) => body.data.map((e) => e.id);
  let one: string;
  let two: string;
  /** Event i's deliveries: to `one` always, to `two` for even i. */
  const events: string[] = [];
  const statuses = ["failed", "succeeded", "retrying", "failed", "pending", "dropped"] as const;

  beforeAll(async () => {
    await gw.request("POST", "/v3/apps", { json: { uid: "filters", name: "Filters" } });
    const endpoint = async (host: string) =>
      (
        await gw.request("POST", "/v3/endpoints", {
          json: { app: "filters", url: `https://${host}.example.com` },
        })
      ).body.id as string;
    one = await endpoint("one");
    two = await endpoint("two");
    for (const [i, status] of statuses.entries()) {
      const event = (
        await gw.request("POST", "/v3/events", {
          json: { app: "filters", type: "user.signed_up", data: { i } },
        })
      ).body.id as string;
      events.push(event);
      await seed.delivery({ eventId: event, endpointId: one, status });
      if (i % 2 === 0) await seed.delivery({ eventId: event, endpointId: two, status: "succeeded" });
    }
  });

  const list = async (query: string): Promise<Listed> => {
    const limit = query.includes("limit=") ? "" : "limit=100&";
    const res = await gw.request("GET", `/v3/events?app=filters&${limit}${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectList(res.body, "Event");
    return res.body;
  };
  const newestFirst = (indexes: number[]) => indexes.map((i) => events[i]!).reverse();

  it("keeps events with a delivery in the status asked, to the endpoint asked, or both at once", async () => {
    expect(ids(await list("status=failed"))).toEqual(newestFirst([0, 3]));
    expect(ids(await list("status=succeeded"))).toEqual(newestFirst([0, 1, 2, 4]));
    expect(ids(await list("status=dropped"))).toEqual(newestFirst([5]));
    expect(ids(await list(`endpoint=${two}`))).toEqual(newestFirst([0, 2, 4]));
    expect(ids(await list(`endpoint=${one}`))).toEqual(newestFirst([0, 1, 2, 3, 4, 5]));
    // Both: the delivery to that endpoint is in that status, not just any delivery.
    expect(ids(await list(`endpoint=${one}&status=succeeded`))).toEqual(newestFirst([1]));
    expect(ids(await list(`endpoint=${two}&status=failed`))).toEqual([]);
    expect(ids(await list(`endpoint=${two}&status=succeeded&type=user.signed_up`))).toEqual(
      newestFirst([0, 2, 4]),
    );
    // Every delivery of a listed event is shown, not only the matching one (event 0 has two).
    const failed = (await list(`endpoint=${one}&status=failed`)).data as unknown as {
      id: string;
      deliveries: unknown[];
    }[];
    expect(failed.find((e) => e.id === events[0])!.deliveries).toHaveLength(2);
  });

  it("pages through a filtered list both ways", async () => {
    const expected = newestFirst([0, 1, 2, 4]);
    const seen: string[] = [];
    let page = await list("status=succeeded&limit=1");
    seen.push(...ids(page));
    while (page.has_more) {
      page = await list(`status=succeeded&limit=1&starting_after=${seen.at(-1)}`);
      seen.push(...ids(page));
    }
    expect(seen).toEqual(expected);
    const back = await list(`status=succeeded&limit=2&ending_before=${expected[3]}`);
    expect(ids(back)).toEqual(expected.slice(1, 3));
    expect(back.has_more).toBe(true);
  });

  it("refuses an unknown status or a malformed endpoint with a 400, another's endpoint with a 404", async () => {
    for (const [query, param, status] of [
      ["status=lost", "status", 400],
      ["endpoint=nope", "endpoint", 400],
      [`endpoint=${newId("endpoint")}`, "endpoint", 404],
    ] as const) {
      const res = await gw.request("GET", `/v3/events?${query}`);
      expect(res.status, query).toBe(status);
      expect(res.body.error.param, query).toBe(param);
    }
    const otherKey = await gw.newAccount("Other");
    const res = await gw.request("GET", `/v3/events?endpoint=${one}`, { key: otherKey });
    expect(res.status).toBe(404);
    expect(res.body.error.param).toBe("endpoint");
  });
});
