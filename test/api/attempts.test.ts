import { newId } from "@herald/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { type Response, startGateway, type TestGateway } from "../support/gateway.ts";
import { expectList, expectMatches } from "../support/openapi.ts";
import { type Seeder, seeder } from "../support/seed.ts";

let gw: TestGateway;
let seed: Seeder;
let endpoints: string[];
let events: string[];
const deliveries: string[] = [];

beforeAll(async () => {
  gw = await startGateway();
  seed = seeder(gw.databaseUrl);
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  await gw.request("POST", "/v3/event-types", { json: { name: "order.placed" } });
  endpoints = [];
  for (const host of ["a", "b"]) {
    endpoints.push(
      (
        await gw.request("POST", "/v3/endpoints", {
          json: { app: "acme", url: `https://${host}.example.com` },
        })
      ).body.id,
    );
  }
  events = [];
  for (let i = 0; i < 3; i++) {
    events.push(
      (await gw.request("POST", "/v3/events", { json: { app: "acme", type: "order.placed", data: { i } } }))
        .body.id,
    );
  }
  for (const eventId of events) {
    for (const endpointId of endpoints)
      deliveries.push(await seed.delivery({ eventId, endpointId, status: "retrying" }));
  }
  // 6 deliveries × 20 attempts = 120 attempts, in three statuses.
  const statuses = ["failed", "succeeded", "pending"] as const;
  for (let n = 1; n <= 20; n++) {
    for (const [i, deliveryId] of deliveries.entries()) {
      await seed.attempt({ deliveryId, status: statuses[(n + i) % 3]!, attemptNumber: n });
    }
  }
});
afterAll(async () => {
  await seed.close();
  await gw.close();
});

type Page = { data: { id: string; endpoint: string; event: string; status: string }[]; has_more: boolean };

describe("listing attempts", () => {
  it("defaults to 25, newest first", async () => {
    const res = await gw.request("GET", "/v3/attempts");
    expectList(res.body, "Attempt");
    expect(res.body.data).toHaveLength(25);
    expect(res.body.has_more).toBe(true);
    const ids = res.body.data.map((a: { id: string }) => a.id);
    expect([...ids].sort().reverse()).toEqual(ids);
  });

  it("filters by endpoint, event, status, app, and all of them together", async () => {
    const byEndpoint: Page = (await gw.request("GET", `/v3/attempts?endpoint=${endpoints[0]}&limit=100`))
      .body;
    expect(byEndpoint.data).toHaveLength(60);
    expect(byEndpoint.data.every((a) => a.endpoint === endpoints[0])).toBe(true);

    const byEvent: Page = (await gw.request("GET", `/v3/attempts?event=${events[1]}&limit=100`)).body;
    expect(byEvent.data).toHaveLength(40);
    expect(byEvent.data.every((a) => a.event === events[1])).toBe(true);

    for (const status of ["succeeded", "failed", "pending"]) {
      const byStatus: Page = (await gw.request("GET", `/v3/attempts?status=${status}&limit=100`)).body;
      expect(byStatus.data).toHaveLength(40);
      expect(byStatus.data.every((a) => a.status === status)).toBe(true);
    }
    expect((await gw.request("GET", "/v3/attempts?app=acme&limit=1")).body.data).toHaveLength(1);

    const all: Page = (
      await gw.request(
        "GET",
        `/v3/attempts?endpoint=${endpoints[1]}&event=${events[2]}&status=failed&app=acme`,
      )
    ).body;
    expect(all.data.length).toBeGreaterThan(0);
    expect(
      all.data.every((a) => a.endpoint === endpoints[1] && a.event === events[2] && a.status === "failed"),
    ).toBe(true);

    const bad = await gw.request("GET", "/v3/attempts?status=weird");
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("status");
  });

  it("walks 120+ attempts with no overlap and no gap while new ones arrive", async () => {
    const seen: string[] = [];
    const expected = (
      await gw.gateway.deps.prisma.attempt.findMany({ select: { id: true }, orderBy: { id: "desc" } })
    ).map((a) => a.id);
    expect(expected.length).toBeGreaterThanOrEqual(120);
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page: Page = (
        await gw.request("GET", `/v3/attempts?limit=7${cursor ? `&starting_after=${cursor}` : ""}`)
      ).body;
      seen.push(...page.data.map((a) => a.id));
      pages++;
      // New attempts arrive between pages; they are newer than every cursor handed out.
      await seed.attempt({
        deliveryId: deliveries[pages % deliveries.length]!,
        status: "pending",
        attemptNumber: 100 + pages,
      });
      if (!page.has_more) break;
      cursor = page.data.at(-1)!.id;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expected);
  });

  it("walks back with ending_before to the newest page", async () => {
    const first: Page = (await gw.request("GET", "/v3/attempts?limit=10")).body;
    const second: Page = (
      await gw.request("GET", `/v3/attempts?limit=10&starting_after=${first.data.at(-1)!.id}`)
    ).body;
    const back: Page = (await gw.request("GET", `/v3/attempts?limit=10&ending_before=${second.data[0]!.id}`))
      .body;
    expect(back.data).toEqual(first.data);
    const newer: Page = (await gw.request("GET", `/v3/attempts?limit=10&ending_before=${first.data[0]!.id}`))
      .body;
    expect(newer.data).toEqual([]);
    expect(newer.has_more).toBe(false);
  });

  it("bounds limit strictly and checks cursors", async () => {
    for (const limit of ["0", "101", "-1", "2.5", "ten"]) {
      const res = await gw.request("GET", `/v3/attempts?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(res.body.error.param).toBe("limit");
    }
    expect((await gw.request("GET", "/v3/attempts?limit=100")).body.data).toHaveLength(100);
    expect((await gw.request("GET", "/v3/attempts?limit=1")).body.data).toHaveLength(1);
    const badCursor = await gw.request("GET", "/v3/attempts?starting_after=evt_nope");
    expect(badCursor.body.error.param).toBe("starting_after");
  });

  it("retrieves one attempt with its request; the list leaves the request out", async () => {
    const one = (await gw.request("GET", "/v3/attempts?limit=1")).body.data[0];
    expect(one).not.toHaveProperty("request");
    const res = await gw.request("GET", `/v3/attempts/${one.id}`);
    expectMatches(res.body, "AttemptWithRequest");
    const event = await seed.prisma.event.findUniqueOrThrow({ where: { id: one.event } });
    // Headers are what a sender reported; these attempts were seeded without a sender.
    expect(res.body).toEqual({
      ...one,
      request: {
        method: "POST",
        url: one.url,
        headers: null,
        body: `{"type":"order.placed","timestamp":"${event.createdAt.toISOString()}","data":{"i": ${(event.data as { i: number }).i}}}`,
        transformed: false,
      },
    });
  });

  it("shows the request headers a sender reported", async () => {
    const one = (await gw.request("GET", "/v3/attempts?status=succeeded&limit=1")).body.data[0];
    const headers = { "content-type": "application/json", "webhook-id": one.event, "X-Tenant": "acme" };
    await seed.prisma.attempt.updateMany({ where: { id: one.id }, data: { requestHeaders: headers } });
    expect((await gw.request("GET", `/v3/attempts/${one.id}`)).body.request.headers).toEqual(headers);
  });
});

describe("filtering attempts by what the caller cannot see", () => {
  const { open, as, portal } = browserSessions(() => gw);

  function expectMissing(res: Response, param: string): void {
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expectMatches(res.body, "Error");
    expect(res.body.error).toMatchObject({ code: "resource_missing", param });
  }

  it("answers 404 at the filter for another account's endpoint or event, as for one that never existed", async () => {
    const other = await gw.newAccount("Other account");
    const asOther = (path: string) => gw.request("GET", path, { key: other });
    expectMissing(await asOther(`/v3/attempts?endpoint=${endpoints[0]}`), "endpoint");
    expectMissing(await asOther(`/v3/attempts?event=${events[0]}`), "event");
    expectMissing(await asOther(`/v3/attempts?endpoint=${endpoints[0]}&status=failed`), "endpoint");
    for (const [param, id] of [
      ["endpoint", newId("endpoint")],
      ["endpoint", "ep_nope"],
      ["endpoint", events[0]!],
      ["event", newId("event")],
      ["event", "not-an-id"],
      ["event", endpoints[0]!],
    ] as const)
      expectMissing(await gw.request("GET", `/v3/attempts?${param}=${id}`), param);
  });

  it("answers 404 to a portal session for an endpoint or event of another app, and lists its own", async () => {
    await gw.request("POST", "/v3/apps", { json: { uid: "globex", name: "Globex" } });
    const otherEndpoint = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "globex", url: "https://g.example.com" } })
    ).body.id;
    const otherEvent = (
      await gw.request("POST", "/v3/events", { json: { app: "globex", type: "order.placed", data: {} } })
    ).body.id;
    const cookie = await open((await portal()).token);
    const asPortal = (path: string) => gw.request("GET", path, as(cookie));
    expectMissing(await asPortal(`/v3/attempts?endpoint=${otherEndpoint}`), "endpoint");
    expectMissing(await asPortal(`/v3/attempts?event=${otherEvent}`), "event");
    const own: Page = (await asPortal(`/v3/attempts?endpoint=${endpoints[0]}&event=${events[0]}&limit=100`))
      .body;
    expect(own.data.length).toBeGreaterThanOrEqual(20);
    expect(own.data.every((a) => a.endpoint === endpoints[0] && a.event === events[0])).toBe(true);
    // The account's key sees both apps' (none made for the other app's yet).
    expect((await gw.request("GET", `/v3/attempts?endpoint=${otherEndpoint}`)).body.data).toEqual([]);
    expect((await gw.request("GET", `/v3/attempts?event=${otherEvent}`)).status).toBe(200);
  });

  it("still lists the attempts of a deleted endpoint, which stay readable", async () => {
    const ep = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://gone.example.com" } })
    ).body.id;
    const attempt = await seed.attempt({
      deliveryId: await seed.delivery({ eventId: events[0]!, endpointId: ep, status: "failed" }),
      status: "failed",
      attemptNumber: 1,
    });
    expect((await gw.request("DELETE", `/v3/endpoints/${ep}`)).status).toBe(200);
    const listed: Page = (await gw.request("GET", `/v3/attempts?endpoint=${ep}`)).body;
    expect(listed.data.map((a) => a.id)).toEqual([attempt]);
  });
});
