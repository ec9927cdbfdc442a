import { newId } from "@herald/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RequestOptions, type Response, startGateway, type TestGateway } from "../support/gateway.ts";
import { expectList, expectMatches } from "../support/openapi.ts";

/**
 * Two accounts on one gateway. Every object belongs to one account: another account's object
 * is a 404 (never a 403), by id or by uid, for reads, writes, deletes and list filters, and
 * the owner's objects are unchanged afterwards.
 */
let gw: TestGateway;
let keyA: string;
let keyB: string;

const SHARED_UID = "shared-customer";
const A_ONLY_UID = "a-only-customer";
const A_ONLY_TYPE = "secret.a_only";

type Ids = {
  app: { id: string; uid: string };
  appOnly?: { id: string };
  endpoint: string;
  event: string;
  keyId: string;
  attempt?: string;
  replay?: string;
};
const A = {} as Ids;
const B = {} as Ids;

const asA = (method: string, path: string, options: RequestOptions = {}) =>
  gw.request(method, path, { ...options, key: keyA });
const asB = (method: string, path: string, options: RequestOptions = {}) =>
  gw.request(method, path, { ...options, key: keyB });

function expectMissing(res: Response, param?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(404);
  expectMatches(res.body, "Error");
  expect(res.body.error.type).toBe("invalid_request_error");
  expect(res.body.error.code).toBe("resource_missing");
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}

async function created(res: Promise<Response>, status = 201): Promise<Response> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r;
}

/** Everything of A's, read by A: compared before and after B's attempts. */
async function snapshotA() {
  const get = async (path: string) => {
    const res = await asA("GET", path);
    expect(res.status, path).toBe(200);
    return res.body;
  };
  return {
    app: await get(`/v3/apps/${A.app.id}`),
    appByUid: await get(`/v3/apps/${SHARED_UID}`),
    appOnly: await get(`/v3/apps/${A_ONLY_UID}`),
    endpoint: await get(`/v3/endpoints/${A.endpoint}`),
    secret: await get(`/v3/endpoints/${A.endpoint}/secret`),
    event: await get(`/v3/events/${A.event}`),
    eventType: await get(`/v3/event-types/${A_ONLY_TYPE}`),
    sharedType: await get("/v3/event-types/order.created"),
    attempt: await get(`/v3/attempts/${A.attempt}`),
    replay: await get(`/v3/replays/${A.replay}`),
    apps: await get("/v3/apps?limit=100"),
    endpoints: await get("/v3/endpoints?limit=100"),
    events: await get("/v3/events?limit=100"),
    keys: await get("/v3/api-keys?limit=100"),
  };
}
let before: Awaited<ReturnType<typeof snapshotA>>;

beforeAll(async () => {
  gw = await startGateway();
  keyA = gw.key;
  keyB = await gw.newAccount("Account B");

  // Both accounts: the same event type name and the same app uid (both allowed: per account).
  for (const [as, ids, label] of [
    [asA, A, "A"],
    [asB, B, "B"],
  ] as const) {
    await created(as("POST", "/v3/event-types", { json: { name: "order.created", description: label } }));
    const app = await created(as("POST", "/v3/apps", { json: { uid: SHARED_UID, name: `App of ${label}` } }));
    ids.app = { id: app.body.id, uid: app.body.uid };
    const ep = await created(
      as("POST", "/v3/endpoints", {
        json: {
          app: SHARED_UID,
          url: `https://${label.toLowerCase()}.example.com/hook`,
          event_types: ["order.created"],
        },
      }),
    );
    ids.endpoint = ep.body.id;
    const event = await created(
      as("POST", "/v3/events", { json: { app: SHARED_UID, type: "order.created", data: { owner: label } } }),
    );
    ids.event = event.body.id;
    const keys = await as("GET", "/v3/api-keys");
    ids.keyId = keys.body.data[0].id;
  }
  // A's own extras: an app and an event type B has no namesake of.
  const only = await created(asA("POST", "/v3/apps", { json: { uid: A_ONLY_UID, name: "Only A" } }));
  A.appOnly = { id: only.body.id };
  await created(asA("POST", "/v3/event-types", { json: { name: A_ONLY_TYPE, description: "A's" } }));

  // A failed delivery with one attempt for A's event, as the dispatcher would have written them
  // (no dispatcher runs in this test), so A has attempts and a replayable failure.
  const deliveryId = newId("delivery");
  A.attempt = newId("attempt");
  const client = new pg.Client({ connectionString: gw.databaseUrl });
  await client.connect();
  try {
    const account = (
      await client.query<{ account_id: string }>("SELECT account_id FROM apps WHERE id = $1", [A.app.id])
    ).rows[0]!.account_id;
    await client.query(
      `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts, last_attempt_at)
       VALUES ($1, $2, $3, $4, $5, 'failed', 1, now() - interval '1 minute')`,
      [deliveryId, account, A.app.id, A.event, A.endpoint],
    );
    await client.query(
      `INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url,
                             response_status, response_body, error, duration_ms, scheduled_at, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, 1, 'failed', 'https://a.example.com/hook', 500, 'oops', 'http_error', 12,
               now() - interval '1 minute', now() - interval '1 minute')`,
      [A.attempt, account, A.app.id, deliveryId, A.event, A.endpoint],
    );
  } finally {
    await client.end();
  }
  const replay = await created(
    asA("POST", `/v3/endpoints/${A.endpoint}/replay`, { json: { event: A.event } }),
    202,
  );
  expect(replay.body.queued).toBe(1);
  A.replay = replay.body.id;

  before = await snapshotA();
});
afterAll(() => gw.close());

describe("the same uid in two accounts", () => {
  it("lets each account have its own app with the uid", () => {
    expect(A.app.uid).toBe(SHARED_UID);
    expect(B.app.uid).toBe(SHARED_UID);
    expect(A.app.id).not.toBe(B.app.id);
  });

  it("resolves the uid to the caller's own app, in paths, bodies and filters", async () => {
    const b = await asB("GET", `/v3/apps/${SHARED_UID}`);
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ id: B.app.id, name: "App of B" });
    const a = await asA("GET", `/v3/apps/${SHARED_UID}`);
    expect(a.body).toMatchObject({ id: A.app.id, name: "App of A" });

    const endpoints = await asB("GET", `/v3/endpoints?app=${SHARED_UID}`);
    expect(endpoints.body.data.map((e: { id: string }) => e.id)).toEqual([B.endpoint]);
    const events = await asB("GET", `/v3/events?app=${SHARED_UID}`);
    expect(events.body.data.map((e: { id: string }) => e.id)).toEqual([B.event]);
    const attempts = await asB("GET", `/v3/attempts?app=${SHARED_UID}`);
    expect(attempts.body.data).toEqual([]);

    // B renames its app through the shared uid: A's app keeps its name.
    const renamed = await asB("POST", `/v3/apps/${SHARED_UID}`, { json: { name: "App of B, renamed" } });
    expect(renamed.body).toMatchObject({ id: B.app.id, name: "App of B, renamed" });
    expect((await asA("GET", `/v3/apps/${SHARED_UID}`)).body.name).toBe("App of A");
    await asB("POST", `/v3/apps/${SHARED_UID}`, { json: { name: "App of B" } });
  });
});

describe("account B and account A's objects", () => {
  it("cannot read, update or delete A's apps, by id or by uid", async () => {
    for (const ref of [A.app.id, A.appOnly!.id, A_ONLY_UID]) {
      expectMissing(await asB("GET", `/v3/apps/${ref}`));
      expectMissing(await asB("POST", `/v3/apps/${ref}`, { json: { name: "Taken over" } }));
      expectMissing(await asB("POST", `/v3/apps/${ref}`, { form: { uid: "stolen" } }));
      expectMissing(await asB("DELETE", `/v3/apps/${ref}`));
    }
  });

  it("cannot read, update, delete, rotate or replay A's endpoint", async () => {
    const ep = A.endpoint;
    expectMissing(await asB("GET", `/v3/endpoints/${ep}`));
    expectMissing(await asB("GET", `/v3/endpoints/${ep}/secret`));
    expectMissing(
      await asB("POST", `/v3/endpoints/${ep}`, { json: { url: "https://evil.example.com/steal" } }),
    );
    expectMissing(await asB("POST", `/v3/endpoints/${ep}`, { form: { disabled: true } }));
    expectMissing(await asB("POST", `/v3/endpoints/${ep}/secret/rotate`));
    expectMissing(await asB("POST", `/v3/endpoints/${ep}/replay`));
    expectMissing(await asB("POST", `/v3/endpoints/${ep}/replay`, { json: { event: A.event } }));
    expectMissing(await asB("DELETE", `/v3/endpoints/${ep}`));
  });

  it("cannot read A's event, attempt or replay", async () => {
    expectMissing(await asB("GET", `/v3/events/${A.event}`));
    expectMissing(await asB("GET", `/v3/attempts/${A.attempt}`));
    expectMissing(await asB("GET", `/v3/replays/${A.replay}`));
  });

  it("cannot replay A's event through its own endpoint", async () => {
    expectMissing(
      await asB("POST", `/v3/endpoints/${B.endpoint}/replay`, { json: { event: A.event } }),
      "event",
    );
  });

  it("cannot see, update, archive or delete A's event types", async () => {
    expectMissing(await asB("GET", `/v3/event-types/${A_ONLY_TYPE}`));
    expectMissing(await asB("POST", `/v3/event-types/${A_ONLY_TYPE}`, { json: { description: "mine now" } }));
    expectMissing(await asB("POST", `/v3/event-types/${A_ONLY_TYPE}/archive`));
    expectMissing(await asB("POST", `/v3/event-types/${A_ONLY_TYPE}/unarchive`));
    expectMissing(await asB("DELETE", `/v3/event-types/${A_ONLY_TYPE}`));
    // The shared name is B's own type, with B's description.
    expect((await asB("GET", "/v3/event-types/order.created")).body.description).toBe("B");
    // A's type names cannot be used by B: not as an endpoint filter, not to send an event.
    const filter = await asB("POST", "/v3/endpoints", {
      json: { app: B.app.id, url: "https://b.example.com/other", event_types: [A_ONLY_TYPE] },
    });
    expect(filter.status).toBe(400);
    expect(filter.body.error.param).toBe("event_types[0]");
    const send = await asB("POST", "/v3/events", { json: { app: B.app.id, type: A_ONLY_TYPE, data: {} } });
    expect(send.status).toBe(400);
    expect(send.body.error.param).toBe("type");
  });

  it("cannot create endpoints or events in A's app", async () => {
    for (const app of [A.app.id, A.appOnly!.id, A_ONLY_UID]) {
      expectMissing(
        await asB("POST", "/v3/endpoints", { json: { app, url: "https://evil.example.com/hook" } }),
        "app",
      );
      expectMissing(
        await asB("POST", "/v3/events", { json: { app, type: "order.created", data: { forged: true } } }),
        "app",
      );
      expectMissing(
        await asB("POST", "/v3/events", { form: { app, type: "order.created", data: { forged: true } } }),
        "app",
      );
    }
  });

  it("cannot revoke A's API key", async () => {
    expectMissing(await asB("DELETE", `/v3/api-keys/${A.keyId}`));
    expect((await asA("GET", "/v3/apps")).status).toBe(200);
  });

  it("finds nothing of A's in its lists, filtered by A's ids or not", async () => {
    const ids = (res: Response) => res.body.data.map((o: { id: string }) => o.id);

    const apps = await asB("GET", "/v3/apps?limit=100");
    expectList(apps.body, "App");
    expect(ids(apps)).toEqual([B.app.id]);
    const endpoints = await asB("GET", "/v3/endpoints?limit=100");
    expect(ids(endpoints)).toEqual([B.endpoint]);
    const events = await asB("GET", "/v3/events?limit=100");
    expect(ids(events)).toEqual([B.event]);
    expect(ids(await asB("GET", "/v3/events?type=order.created"))).toEqual([B.event]);
    const types = await asB("GET", "/v3/event-types?include_archived=true");
    expect(types.body.data.map((t: { name: string }) => t.name)).toEqual(["order.created"]);
    const keys = await asB("GET", "/v3/api-keys");
    expect(ids(keys)).toEqual([B.keyId]);

    // Filtering by A's endpoint or event is a 404 at the filter, as filtering by A's app is.
    expectMissing(await asB("GET", `/v3/attempts?endpoint=${A.endpoint}`), "endpoint");
    expectMissing(await asB("GET", `/v3/attempts?event=${A.event}`), "event");
    expectMissing(await asB("GET", `/v3/events?endpoint=${A.endpoint}`), "endpoint");
    expect((await asB("GET", "/v3/attempts?status=failed")).body.data).toEqual([]);
    expect((await asB("GET", "/v3/attempts")).body.data).toEqual([]);

    // Filtering by another account's app is a 404 for that app, as for any unknown app.
    expectMissing(await asB("GET", `/v3/endpoints?app=${A.app.id}`), "app");
    expectMissing(await asB("GET", `/v3/events?app=${A.app.id}`), "app");
    expectMissing(await asB("GET", `/v3/attempts?app=${A.appOnly!.id}`), "app");
    expectMissing(await asB("GET", `/v3/events?app=${A_ONLY_UID}`), "app");

    // A's ids as paging cursors only page through B's own objects.
    for (const path of [
      `/v3/apps?starting_after=${A.app.id}`,
      `/v3/apps?ending_before=${A.app.id}`,
      `/v3/events?ending_before=${A.event}`,
      `/v3/events?starting_after=${A.event}`,
      `/v3/endpoints?ending_before=${A.endpoint}`,
    ]) {
      const page = await asB("GET", path);
      expect(page.status, path).toBe(200);
      for (const id of ids(page)) expect([B.app.id, B.event, B.endpoint], path).toContain(id);
    }
    const attemptPage = await asB("GET", `/v3/attempts?ending_before=${A.attempt}`);
    expect(attemptPage.body.data).toEqual([]);
  });

  it("answers 404, never 403, and the same way as for an id that never existed", async () => {
    const theirs = await asB("GET", `/v3/endpoints/${A.endpoint}`);
    const none = await asB("GET", `/v3/endpoints/${newId("endpoint")}`);
    expect(theirs.status).toBe(404);
    expect(none.status).toBe(404);
    expect(theirs.body.error.code).toBe(none.body.error.code);
    expect(Object.keys(theirs.body.error).sort()).toEqual(Object.keys(none.body.error).sort());
    const event = await asB("GET", `/v3/events/${A.event}`);
    expect(event.body.error.message).not.toContain("owner");
    expect(JSON.stringify(event.body)).not.toContain("App of A");
  });
});

describe("account A afterwards", () => {
  it("has every object unchanged", async () => {
    const after = await snapshotA();
    expect(after).toEqual(before);
    expect(after.endpoint).toMatchObject({ url: "https://a.example.com/hook", disabled: false });
    expect(after.app.name).toBe("App of A");
    expect(after.event.data).toEqual({ owner: "A" });
    expect(after.event.deliveries).toEqual([
      expect.objectContaining({ endpoint: A.endpoint, status: "failed" }),
    ]);
    expect(after.eventType).toMatchObject({ description: "A's", archived: false });
    expect(after.keys.data.find((k: { id: string }) => k.id === A.keyId).revoked_at).toBeNull();
    expect(after.events.data.map((e: { id: string }) => e.id)).toEqual([A.event]);
  });

  it("still sees its own attempts and can replay its own endpoint", async () => {
    const attempts = await asA("GET", `/v3/attempts?endpoint=${A.endpoint}`);
    expect(attempts.body.data.map((a: { id: string }) => a.id)).toEqual([A.attempt]);
    const replay = await asA("POST", `/v3/endpoints/${A.endpoint}/replay`);
    expect(replay.status).toBe(202);
    // Its one failed delivery is counted by the replay made above, still unfinished here.
    expect(replay.body).toMatchObject({ object: "replay", endpoint: A.endpoint, queued: 0 });
  });
});
