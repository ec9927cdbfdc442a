import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressPath, type RouteSpec } from "../../services/api-gateway/src/http/route.ts";
import { routes } from "../../services/api-gateway/src/routes.ts";
import { browserSessions } from "../support/browserSessions.ts";
import { ADMIN_TOKEN, type Response, startGateway, type TestGateway } from "../support/gateway.ts";
import { openListen } from "../support/listenSocket.ts";
import { expectList, expectMatches } from "../support/openapi.ts";

/**
 * The audit log, route by route: every route of the table that may change something names its
 * action, each such route's successful call writes exactly one record (the actor, the action,
 * the object, the request id and the source address, never a value), and a call that fails
 * writes none, even one that fails inside the transaction after its record was written.
 */
let gw: TestGateway;
let keyId: string;
let appId: string;
const { open, as } = browserSessions(() => gw);
const admin = { key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
const name = (r: RouteSpec) => `${r.method.toUpperCase()} ${r.path}`;
const changing = routes.filter((r) => r.method !== "get");

type Made = {
  res: Response;
  /** The object the record names. */
  target: string;
  /** Whose log it is in: the account's key by default. */
  logKey?: string;
  /** Who made it: the account's key by default. */
  actor?: { type: string; id: string };
};

const ok = (res: Response) => {
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res;
};
let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}`;
const app = async () => ok(await gw.request("POST", "/v3/apps", { json: { name: unique("app") } })).body.id;
const endpoint = async () =>
  ok(await gw.request("POST", "/v3/endpoints", { json: { app: appId, url: "https://example.com/audit" } }))
    .body.id;
const eventType = async () => {
  const type = unique("audit.type").replace("-", "_");
  ok(await gw.request("POST", "/v3/event-types", { json: { name: type } }));
  return type;
};

/** A successful call of each audited route, with what it needs made first. */
const succeed: Record<string, () => Promise<Made>> = {
  "POST /v3/apps": async () => {
    const res = await gw.request("POST", "/v3/apps", { json: { name: "Audited", uid: unique("uid") } });
    return { res, target: res.body.id };
  },
  "POST /v3/apps/{app}": async () => {
    const id = await app();
    return { res: await gw.request("POST", `/v3/apps/${id}`, { json: { name: "Renamed" } }), target: id };
  },
  "DELETE /v3/apps/{app}": async () => {
    const id = await app();
    return { res: await gw.request("DELETE", `/v3/apps/${id}`), target: id };
  },
  "POST /v3/event-types": async () => {
    const type = unique("audit.created").replace("-", "_");
    return { res: await gw.request("POST", "/v3/event-types", { json: { name: type } }), target: type };
  },
  "POST /v3/event-types/{name}": async () => {
    const type = await eventType();
    return {
      res: await gw.request("POST", `/v3/event-types/${type}`, { json: { description: "Changed" } }),
      target: type,
    };
  },
  "POST /v3/event-types/{name}/archive": async () => {
    const type = await eventType();
    return { res: await gw.request("POST", `/v3/event-types/${type}/archive`), target: type };
  },
  "POST /v3/event-types/{name}/unarchive": async () => {
    const type = await eventType();
    ok(await gw.request("POST", `/v3/event-types/${type}/archive`));
    return { res: await gw.request("POST", `/v3/event-types/${type}/unarchive`), target: type };
  },
  "DELETE /v3/event-types/{name}": async () => {
    const type = await eventType();
    return { res: await gw.request("DELETE", `/v3/event-types/${type}`), target: type };
  },
  "POST /v3/endpoints": async () => {
    const res = await gw.request("POST", "/v3/endpoints", {
      json: { app: appId, url: "https://example.com/new", headers: { "X-Token": "header-secret-value" } },
    });
    return { res, target: res.body.id };
  },
  "POST /v3/endpoints/{id}": async () => {
    const id = await endpoint();
    return {
      res: await gw.request("POST", `/v3/endpoints/${id}`, {
        json: { description: "Changed", disabled: false },
      }),
      target: id,
    };
  },
  "DELETE /v3/endpoints/{id}": async () => {
    const id = await endpoint();
    return { res: await gw.request("DELETE", `/v3/endpoints/${id}`), target: id };
  },
  "POST /v3/endpoints/{id}/secret/rotate": async () => {
    const id = await endpoint();
    return { res: await gw.request("POST", `/v3/endpoints/${id}/secret/rotate`, { json: {} }), target: id };
  },
  "POST /v3/endpoints/{id}/replay": async () => {
    const id = await endpoint();
    const res = await gw.request("POST", `/v3/endpoints/${id}/replay`, { json: {} });
    return { res, target: res.body.id };
  },
  "DELETE /v3/events/{id}/data": async () => {
    const type = await eventType();
    const event = ok(await gw.request("POST", "/v3/events", { json: { app: appId, type, data: { a: 1 } } }));
    return { res: await gw.request("DELETE", `/v3/events/${event.body.id}/data`), target: event.body.id };
  },
  "POST /v3/operational-endpoints": async () => {
    const res = await gw.request("POST", "/v3/operational-endpoints", {
      json: { url: "https://example.com/ops" },
    });
    return { res, target: res.body.id };
  },
  "POST /v3/api-keys": async () => {
    const res = await gw.request("POST", "/v3/api-keys", {
      json: { name: "audited", scopes: ["events:read"] },
    });
    return { res, target: res.body.id };
  },
  "DELETE /v3/api-keys/{id}": async () => {
    const made = ok(await gw.request("POST", "/v3/api-keys", { json: {} })).body;
    return { res: await gw.request("DELETE", `/v3/api-keys/${made.id}`), target: made.id };
  },
  "POST /v3/apps/{app}/portal-sessions": async () => {
    const res = await gw.request("POST", `/v3/apps/${appId}/portal-sessions`, { json: {} });
    return { res, target: res.body.id };
  },
  "DELETE /v3/apps/{app}/portal-sessions": async () => ({
    res: await gw.request("DELETE", `/v3/apps/${appId}/portal-sessions`),
    target: appId,
  }),
  "POST /v3/dashboard-sessions": async () => {
    const res = await gw.request("POST", "/v3/dashboard-sessions", { json: {} });
    return { res, target: res.body.id };
  },
  "DELETE /v3/dashboard-sessions/{id}": async () => {
    const made = ok(await gw.request("POST", "/v3/dashboard-sessions", { json: {} })).body;
    return { res: await gw.request("DELETE", `/v3/dashboard-sessions/${made.id}`), target: made.id };
  },
  "POST /session": async () => {
    const made = ok(await gw.request("POST", "/v3/dashboard-sessions", { json: {} })).body;
    const res = await gw.request("POST", "/session", {
      key: null,
      headers: { "herald-page": "dashboard" },
      json: { token: made.token },
    });
    return { res, target: made.id, actor: { type: "dashboard_session", id: made.id } };
  },
  "DELETE /session": async () => {
    const made = ok(await gw.request("POST", `/v3/apps/${appId}/portal-sessions`, { json: {} })).body;
    const cookie = await open(made.token, "portal");
    const res = await gw.request("DELETE", "/session", as(cookie, "portal"));
    return { res, target: made.id, actor: { type: "portal_session", id: made.id } };
  },
  "POST /admin/accounts": async () => {
    const res = await gw.request("POST", "/admin/accounts", { ...admin, json: { name: unique("Account") } });
    return {
      res,
      target: res.body.account.id,
      logKey: res.body.api_key.key,
      actor: { type: "operator", id: "admin_token" },
    };
  },
  "POST /admin/accounts/{id}": async () => {
    const made = ok(
      await gw.request("POST", "/admin/accounts", { ...admin, json: { name: unique("Account") } }),
    );
    const id = made.body.account.id;
    const res = await gw.request("POST", `/admin/accounts/${id}`, {
      ...admin,
      json: { retention_seconds: 86_400 },
    });
    return { res, target: id, logKey: made.body.api_key.key, actor: { type: "operator", id: "admin_token" } };
  },
};

async function newest(key = gw.key) {
  const res = await gw.request("GET", "/v3/audit-log?limit=100", { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expectList(res.body, "AuditRecord");
  return res.body.data as {
    id: string;
    action: string;
    actor: { type: string; id: string; name: string | null };
    target: { type: string; id: string | null };
    fields: string[];
    request_id: string | null;
    source_ip: string | null;
    created_at: string;
  }[];
}

beforeAll(async () => {
  gw = await startGateway();
  const keys = (await gw.request("GET", "/v3/api-keys")).body.data;
  keyId = keys.find((k: { prefix: string }) => gw.key.startsWith(k.prefix)).id;
  appId = (await gw.request("POST", "/v3/apps", { json: { uid: "audited-app", name: "Audited" } })).body.id;
});
afterAll(() => gw.close());

describe("the audit log, route by route", () => {
  it("every route that may change something names its action, or says it records none", () => {
    for (const route of changing)
      expect(route.audit, `${name(route)} declares no \`audit\``).not.toBeUndefined();
    const audited = changing.filter((r) => r.audit);
    expect(audited.length).toBeGreaterThanOrEqual(25);
    // Each audited route has a successful call below: a new one must be added here.
    expect(audited.map(name).sort()).toEqual(Object.keys(succeed).sort());
  });

  for (const route of changing.filter((r) => r.audit)) {
    it(`${name(route)}: one record of ${route.audit} when it succeeds, none when it fails`, async () => {
      const made = await succeed[name(route)]!();
      // The record is written with the change: it is there when the answer is.
      ok(made.res);
      const after = await newest(made.logKey);
      const records = after.filter((r) => r.request_id === made.res.headers.get("request-id"));
      expect(records, JSON.stringify(after.slice(0, 3))).toHaveLength(1);
      const [record] = records;
      expect(record).toMatchObject({
        action: route.audit,
        actor: made.actor ? { ...made.actor, name: null } : { type: "api_key", id: keyId, name: null },
        target: { id: made.target },
      });
      expect(record!.source_ip).toMatch(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
      expect(Date.now() - Date.parse(record!.created_at)).toBeLessThan(60_000);
      // Never a value: no secret the response carried, no header value sent.
      const text = JSON.stringify(record);
      for (const secret of [
        made.res.body?.key,
        made.res.body?.token,
        made.res.body?.secret,
        "header-secret-value",
      ])
        if (typeof secret === "string") expect(text).not.toContain(secret);

      // The same route refused (an object there is not, a link never made, a field it does not
      // take), or with nothing to change (no session to end): nothing recorded.
      const last = (await newest())[0]!.id;
      const path = expressPath(route.path).replace(/:(\w+)/g, "missing-object");
      const body =
        route.path === "/session" ? { token: "missing" } : path.includes("missing-object") ? {} : { nope: 1 };
      const failed = await gw.request(route.method.toUpperCase(), path, {
        ...(route.auth === "admin" ? admin : {}),
        ...(route.auth === "none" ? { key: null, headers: { "herald-page": "dashboard" } } : {}),
        ...(route.method === "post" ? { json: body } : {}),
      });
      if (failed.status < 400) expect(failed.body).toEqual({ object: "session", deleted: false });
      expect((await newest())[0]!.id).toBe(last);
    });
  }

  it("a change refused inside its transaction leaves no record", async () => {
    const type = await eventType();
    const last = (await newest())[0]!.id;
    // The record is written before the row the name collides with: both roll back.
    const dup = await gw.request("POST", "/v3/event-types", { json: { name: type } });
    expect(dup.status).toBe(409);
    const id = await endpoint();
    const secondLast = (await newest())[0]!.id;
    expect(secondLast).not.toBe(last);
    // Its URL moved to another origin while custom headers stay: refused under the row's lock.
    ok(await gw.request("POST", `/v3/endpoints/${id}`, { json: { headers: { "X-Token": "kept" } } }));
    const beforeRefused = (await newest())[0]!.id;
    const moved = await gw.request("POST", `/v3/endpoints/${id}`, {
      json: { url: "https://other.example.com/x" },
    });
    expect(moved.status).toBe(400);
    expect((await newest())[0]!.id).toBe(beforeRefused);
    const records = await newest();
    expect(records.filter((r) => r.target.id === type && r.action === "event_type.created")).toHaveLength(1);
  });
});

describe("GET /v3/audit-log", () => {
  it("filters by actor, action, object and time, pages newest first, and needs audit_log:read", async () => {
    const reader = ok(
      await gw.request("POST", "/v3/api-keys", { json: { scopes: ["audit_log:read", "apps:write"] } }),
    ).body;
    const started = new Date().toISOString();
    for (let i = 0; i < 3; i++)
      ok(await gw.request("POST", "/v3/apps", { key: reader.key, json: { name: `By reader ${i}` } }));
    const list = async (query: string) => {
      const res = await gw.request("GET", `/v3/audit-log?${query}`, { key: reader.key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    const mine = await list(`actor=${reader.id}`);
    expect(mine.data.map((r: { action: string }) => r.action)).toEqual([
      "app.created",
      "app.created",
      "app.created",
    ]);
    expect(mine.data.map((r: { id: string }) => r.id)).toEqual(
      [...mine.data.map((r: { id: string }) => r.id)].sort().reverse(),
    );
    const page = await list(`actor=${reader.id}&limit=2`);
    expect(page.has_more).toBe(true);
    const rest = await list(`actor=${reader.id}&limit=2&starting_after=${page.data[1].id}`);
    expect(rest.data.map((r: { id: string }) => r.id)).toEqual([mine.data[2].id]);
    expect((await list(`action=app.created&since=${encodeURIComponent(started)}`)).data).toHaveLength(3);
    expect((await list(`action=app.&since=${encodeURIComponent(started)}`)).data).toHaveLength(3);
    expect((await list(`object=${mine.data[0].target.id}`)).data).toHaveLength(1);
    expect((await list(`until=${encodeURIComponent(started)}&actor=${reader.id}`)).data).toHaveLength(0);
    const bad = await gw.request("GET", "/v3/audit-log?since=yesterday", { key: reader.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("since");
    const other = ok(await gw.request("POST", "/v3/api-keys", { json: { scopes: ["apps:read"] } })).body;
    const refused = await gw.request("GET", "/v3/audit-log", { key: other.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual([{ scope: "audit_log:read" }]);
  });

  it("names a dashboard session's changes by the session, and another account sees none of them", async () => {
    const made = ok(await gw.request("POST", "/v3/dashboard-sessions", { json: {} })).body;
    const cookie = await open(made.token, "dashboard");
    const res = ok(
      await gw.request("POST", "/v3/apps", {
        ...as(cookie, "dashboard"),
        json: { name: "From the dashboard" },
      }),
    );
    const [record] = await newest();
    expect(record).toMatchObject({
      action: "app.created",
      actor: { type: "dashboard_session", id: made.id },
      target: { type: "app", id: res.body.id },
      fields: ["name"],
    });
    const otherKey = await gw.newAccount("Another");
    const theirs = await newest(otherKey);
    expect(theirs.some((r) => r.id === record!.id)).toBe(false);
    expectMatches(record, "AuditRecord");
  });
});

describe("the source address", () => {
  it("is the connection's, unless TRUST_PROXY trusts the proxies in front that name the client", async () => {
    const spoofed = { "x-forwarded-for": "203.0.113.7" };
    ok(await gw.request("POST", "/v3/apps", { json: { name: "Spoofed" }, headers: spoofed }));
    expect((await newest())[0]!.source_ip).toMatch(/127\.0\.0\.1$|^::1$/);

    const behind = await startGateway({ TRUST_PROXY: "1" });
    try {
      ok(await behind.request("POST", "/v3/apps", { json: { name: "Behind" }, headers: spoofed }));
      const [record] = (await behind.request("GET", "/v3/audit-log")).body.data;
      expect(record.source_ip).toBe("203.0.113.7");
    } finally {
      await behind.close();
    }
  });
});

describe("herald listen", () => {
  it("records the endpoint its socket makes and deletes, and ends when its key expires", async () => {
    const ends = new Date(Date.now() + 3000);
    const key = ok(
      await gw.request("POST", "/v3/api-keys", {
        json: { name: "listener", scopes: ["endpoints:write"], expires_at: ends.toISOString() },
      }),
    ).body;
    const client = await openListen(gw.url, "app=audited-app", key.key);
    const endpoint = client.ready.endpoint.id as string;
    // Past the key's end the socket is closed within the liveness check, its endpoint deleted.
    await expect.poll(() => client.closed, { timeout: 10_000, interval: 100 }).not.toBeNull();
    expect(client.closed!.at).toBeGreaterThanOrEqual(ends.getTime());
    const records = async () => (await newest()).filter((r) => r.target.id === endpoint);
    await expect
      .poll(async () => (await records()).map((r) => r.action), { timeout: 10_000 })
      .toEqual(["endpoint.deleted", "endpoint.created"]);
    for (const record of await records())
      expect(record).toMatchObject({ actor: { type: "api_key", id: key.id }, fields: ["listen"] });
  });
});
