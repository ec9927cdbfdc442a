import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { covers, RESOURCE_SCOPES, type ResourceScope } from "@herald/contracts/scopes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Herald, HeraldPermissionError } from "../../packages/sdk/src/index.ts";
import { expressPath, type RouteSpec } from "../../services/api-gateway/src/http/route.ts";
import { routes } from "../../services/api-gateway/src/routes.ts";
import { browserSessions } from "../support/browserSessions.ts";
import { type Response, startGateway, type TestGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";

/**
 * Every account route of the route table against every scope: a key holding the route's
 * scope gets past the check, a key holding every other scope is refused with a 403 naming it.
 * The table is the gateway's own, so a route added without a scope fails here (and at compile).
 */
let gw: TestGateway;
const { open, as } = browserSessions(() => gw);
const accountRoutes = routes.filter(
  (r): r is Extract<RouteSpec, { auth: "account" }> => r.auth === "account",
);

/** A key holding exactly these scopes (made by the account's `*` key). */
async function keyWith(scopes: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const res = await gw.request("POST", "/v3/api-keys", { json: { scopes, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.scopes).toEqual(scopes);
  return res.body.key;
}

/** The route called with placeholders for its path parameters, and an empty body. */
function call(route: RouteSpec, key: string): Promise<Response> {
  const path = expressPath(route.path).replace(/:(\w+)/g, "scope-probe");
  return gw.request(route.method.toUpperCase(), path, {
    key,
    ...(route.method === "post" ? { json: {} } : {}),
  });
}

function expectInsufficient(res: Response, scope: string, who = "This API key"): void {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expectMatches(res.body, "Error");
  expect(res.body.error.code).toBe("insufficient_scope");
  expect(res.body.error.details).toEqual([{ scope }]);
  expect(res.body.error.message).toContain(`${who} lacks the scope '${scope}'`);
}

/** Routes that hand on a power of their own: the caller must hold it too (a portal link's). */
const ALSO_NEEDS: Record<string, string[]> = {
  "POST /v3/apps/{app}/portal-sessions": ["endpoints:write", "events:write"],
};

const single = new Map<ResourceScope, string>();
const allBut = new Map<ResourceScope, string>();

beforeAll(async () => {
  gw = await startGateway();
  for (const scope of RESOURCE_SCOPES) {
    single.set(scope, await keyWith([scope]));
    allBut.set(scope, await keyWith(RESOURCE_SCOPES.filter((s) => !covers([s], scope))));
  }
});
afterAll(() => gw.close());

describe("scopes, route by route", () => {
  it("every account route names a scope there is", () => {
    expect(accountRoutes.length).toBeGreaterThan(40);
    for (const route of accountRoutes)
      expect([...RESOURCE_SCOPES, "any"], `${route.method} ${route.path}`).toContain(route.scope);
    // Each scope guards something.
    for (const scope of RESOURCE_SCOPES)
      expect(
        accountRoutes.some((r) => r.scope === scope),
        scope,
      ).toBe(true);
  });

  it("the security page describes each scope", () => {
    const page = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8");
    for (const scope of [...RESOURCE_SCOPES, "*"]) expect(page, scope).toContain(`| \`${scope}\``);
  });

  it("the OpenAPI document lists each operation's scope", async () => {
    const doc = (await gw.request("GET", "/v3/openapi.json")).body;
    for (const route of routes) {
      const op = doc.paths[route.path][route.method];
      expect(op["x-herald-scope"], `${route.method} ${route.path}`).toBe(
        route.auth === "account" ? route.scope : undefined,
      );
    }
  });

  for (const route of accountRoutes) {
    const name = `${route.method.toUpperCase()} ${route.path} (${route.scope})`;
    it(`${name}: its scope passes, and every other scope is a 403 naming it`, async () => {
      if (route.scope === "any") {
        // Whatever a key holds: the one scope furthest from it will do.
        const res = await call(route, single.get("events:read")!);
        expect(res.status, JSON.stringify(res.body)).not.toBe(403);
        return;
      }
      const also = ALSO_NEEDS[`${route.method.toUpperCase()} ${route.path}`];
      const allowed = await call(
        route,
        also ? await keyWith([route.scope, ...also]) : single.get(route.scope)!,
      );
      expect(allowed.status, JSON.stringify(allowed.body)).not.toBe(403);
      expect(allowed.status).not.toBe(401);
      expectInsufficient(await call(route, allBut.get(route.scope)!), route.scope);
      // A :write scope covers its :read.
      if (route.scope.endsWith(":read")) {
        const write = route.scope.replace(/:read$/, ":write") as ResourceScope;
        expect((await call(route, single.get(write)!)).status).not.toBe(403);
      }
    });
  }
});

describe("the SDK", () => {
  it("tells which scope a refused call needs", async () => {
    const herald = new Herald({ apiKey: single.get("apps:read")!, baseUrl: gw.url, maxRetries: 0 });
    expect(Array.isArray(await herald.apps.list().toArray())).toBe(true);
    const refused = await herald.endpoints
      .list()
      .toArray()
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HeraldPermissionError);
    expect((refused as HeraldPermissionError).requiredScope).toBe("endpoints:read");
    expect((refused as HeraldPermissionError).code).toBe("insufficient_scope");
  });
});

describe("what a key may give", () => {
  it("no key makes a key with a scope it lacks, `*` included", async () => {
    const keys = await keyWith(["keys", "events:write"]);
    for (const scopes of [["endpoints:write"], ["*"], ["keys", "apps:read"]]) {
      const res = await gw.request("POST", "/v3/api-keys", { key: keys, json: { scopes } });
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.code).toBe("insufficient_scope");
      expect(scopes).toContain(res.body.error.details[0].scope);
    }
    // What it holds it may give, a :read its :write covers too; by default, all it holds.
    const narrower = await gw.request("POST", "/v3/api-keys", {
      key: keys,
      json: { scopes: ["events:read"] },
    });
    expect(narrower.status).toBe(201);
    expect(narrower.body.scopes).toEqual(["events:read"]);
    const same = await gw.request("POST", "/v3/api-keys", { key: keys, json: {} });
    expect(same.body.scopes).toEqual(["keys", "events:write"]);
    // A key without `keys` makes none at all.
    const sender = await keyWith(["events:write"]);
    expectInsufficient(
      await gw.request("POST", "/v3/api-keys", { key: sender, json: { scopes: ["events:write"] } }),
      "keys",
    );
  });

  it("a key with an expiry makes keys that end no later, and expires itself", async () => {
    const ends = new Date(Date.now() + 3000);
    const expiring = await keyWith(["*"], { expires_at: ends.toISOString() });
    const later = await gw.request("POST", "/v3/api-keys", {
      key: expiring,
      json: { expires_at: Math.floor(ends.getTime() / 1000) + 60 },
    });
    expect(later.status).toBe(403);
    expect(later.body.error).toMatchObject({ code: "key_outlives_maker", param: "expires_at" });
    const child = await gw.request("POST", "/v3/api-keys", { key: expiring, json: {} });
    expect(child.status).toBe(201);
    expect(child.body.expires_at).toBe(ends.toISOString());
    const past = await gw.request("POST", "/v3/api-keys", { json: { expires_at: "2020-01-01T00:00:00Z" } });
    expect(past.status).toBe(400);
    expect(past.body.error.param).toBe("expires_at");
    // A dashboard session it opens ends with it.
    const dashboard = await gw.request("POST", "/v3/dashboard-sessions", {
      key: expiring,
      json: { expires_in: 3600 },
    });
    expect(Date.parse(dashboard.body.expires_at)).toBeLessThanOrEqual(ends.getTime());

    expect((await gw.request("GET", "/v3/apps", { key: expiring })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, ends.getTime() - Date.now() + 50)));
    for (const key of [expiring, child.body.key]) {
      const res = await gw.request("GET", "/v3/apps", { key });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe(`This API key expired at ${ends.toISOString()}.`);
    }
  });
});

describe("what a key may take away", () => {
  it("revokes keys and ends dashboard sessions holding no scope it lacks, and itself", async () => {
    const keysOnly = await keyWith(["keys"]);
    const admin = (await gw.request("POST", "/v3/api-keys", { json: { name: "admin" } })).body;
    expectInsufficient(await gw.request("DELETE", `/v3/api-keys/${admin.id}`, { key: keysOnly }), "*");
    const adminSession = (await gw.request("POST", "/v3/dashboard-sessions", { key: admin.key, json: {} }))
      .body;
    expectInsufficient(
      await gw.request("DELETE", `/v3/dashboard-sessions/${adminSession.id}`, { key: keysOnly }),
      "*",
    );
    const narrow = (await gw.request("POST", "/v3/api-keys", { key: keysOnly, json: {} })).body;
    expect((await gw.request("DELETE", `/v3/api-keys/${narrow.id}`, { key: keysOnly })).status).toBe(200);
    expect((await gw.request("GET", "/v3/apps", { key: admin.key })).status).toBe(200);
  });

  it("replays an Idempotency-Key's response only to the credential that sent it", async () => {
    const headers = { "idempotency-key": "make-ci-key" };
    const first = await gw.request("POST", "/v3/api-keys", { headers, json: { name: "ci" } });
    const again = await gw.request("POST", "/v3/api-keys", { headers, json: { name: "ci" } });
    expect(again.body.key).toBe(first.body.key);
    const keysOnly = await keyWith(["keys"]);
    const other = await gw.request("POST", "/v3/api-keys", { key: keysOnly, headers, json: { name: "ci" } });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
    expect(other.body.scopes).toEqual(["keys"]);
  });
});

describe("portal links", () => {
  it("are made only by a caller holding what the link can do", async () => {
    await gw.request("POST", "/v3/apps", { json: { uid: "portal-grant", name: "Grant" } });
    const path = "/v3/apps/portal-grant/portal-sessions";
    const portalOnly = single.get("portal")!;
    expectInsufficient(await gw.request("POST", path, { key: portalOnly, json: {} }), "endpoints:write");
    expectInsufficient(
      await gw.request("POST", path, { key: portalOnly, json: { read_only: true } }),
      "endpoints:read",
    );
    const reader = await keyWith(["portal", "endpoints:read", "events:read"]);
    expect((await gw.request("POST", path, { key: reader, json: { read_only: true } })).status).toBe(201);
    expectInsufficient(await gw.request("POST", path, { key: reader, json: {} }), "endpoints:write");
    const writer = await keyWith(["portal", "endpoints:write", "events:write"]);
    expect((await gw.request("POST", path, { key: writer, json: {} })).status).toBe(201);
  });
});

describe("dashboard sessions", () => {
  it("hold the scopes of the key that opened them, and of the session that made them", async () => {
    await gw.request("POST", "/v3/apps", { json: { uid: "scoped-app", name: "Scoped" } });
    const reader = await keyWith(["apps:read", "portal", "endpoints:read", "events:read"]);
    const made = await gw.request("POST", "/v3/dashboard-sessions", { key: reader, json: {} });
    expect(made.status).toBe(201);
    const cookie = await open(made.body.token, "dashboard");
    expect((await gw.request("GET", "/v3/apps", as(cookie, "dashboard"))).status).toBe(200);
    const write = await gw.request("POST", "/v3/apps", {
      ...as(cookie, "dashboard"),
      json: { name: "Not allowed" },
    });
    expectInsufficient(write, "apps:write", "This dashboard session");
    expect(write.body.error.message).toContain("(it holds: apps:read, portal, endpoints:read, events:read)");
    // It may make a read-only portal link (it holds `portal` and the reads), not list keys.
    const link = await gw.request("POST", "/v3/apps/scoped-app/portal-sessions", {
      ...as(cookie, "dashboard"),
      json: { read_only: true },
    });
    expect(link.status).toBe(201);
    expectInsufficient(
      await gw.request("GET", "/v3/api-keys", as(cookie, "dashboard")),
      "keys",
      "This dashboard session",
    );
    // What the page is told it may do.
    const session = await gw.request("GET", "/session", as(cookie, "dashboard"));
    expect(session.body.scopes).toEqual(["apps:read", "portal", "endpoints:read", "events:read"]);
  });
});

describe("a key confined to one app", () => {
  it("reaches that app's objects and nothing of another app, nor what spans the account", async () => {
    const mine = (await gw.request("POST", "/v3/apps", { json: { uid: "confined-a", name: "A" } })).body;
    const other = (await gw.request("POST", "/v3/apps", { json: { uid: "confined-b", name: "B" } })).body;
    await gw.request("POST", "/v3/event-types", { json: { name: "order.paid" } });
    const otherEndpoint = (
      await gw.request("POST", "/v3/endpoints", {
        json: { app: other.id, url: "https://example.com/b" },
      })
    ).body;
    const confined = await keyWith(["*"], { app: "confined-a" });
    const as = (method: string, path: string, json?: object) =>
      gw.request(method, path, { key: confined, ...(json ? { json } : {}) });

    expect((await as("GET", "/v3/apps")).body.data.map((a: { id: string }) => a.id)).toEqual([mine.id]);
    expect((await as("GET", "/v3/apps/confined-a")).status).toBe(200);
    expect((await as("GET", "/v3/apps/confined-b")).status).toBe(404);
    expect((await as("POST", "/v3/apps/confined-b", { name: "Taken" })).status).toBe(404);
    expect((await as("DELETE", "/v3/apps/confined-b")).status).toBe(404);
    expect((await as("GET", `/v3/endpoints/${otherEndpoint.id}`)).status).toBe(404);
    expect((await as("GET", "/v3/endpoints?app=confined-b")).status).toBe(404);
    const made = await as("POST", "/v3/endpoints", { app: "confined-a", url: "https://example.com/a" });
    expect(made.status).toBe(201);
    expect((await as("GET", "/v3/endpoints")).body.data.map((e: { id: string }) => e.id)).toEqual([
      made.body.id,
    ]);
    expect(
      (await as("POST", "/v3/endpoints", { app: "confined-b", url: "https://example.com/x" })).status,
    ).toBe(404);
    expect((await as("POST", "/v3/events", { app: "confined-b", type: "order.paid", data: {} })).status).toBe(
      404,
    );
    expect((await as("POST", "/v3/events", { app: "confined-a", type: "order.paid", data: {} })).status).toBe(
      201,
    );
    expect((await as("POST", "/v3/apps/confined-b/portal-sessions", {})).status).toBe(404);
    expect((await as("POST", "/v3/apps/confined-a/portal-sessions", {})).status).toBe(201);
    for (const [method, path, body] of [
      ["POST", "/v3/apps", { name: "New" }],
      ["POST", "/v3/event-types", { name: "order.shipped" }],
      ["GET", "/v3/operational-endpoints", undefined],
      ["POST", "/v3/dashboard-sessions", {}],
    ] as const) {
      const res = await as(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("app_confined");
    }
    // Its app's uid is the account's to give, not its to change.
    const uid = await as("POST", "/v3/apps/confined-a", { uid: "taken-by-confined" });
    expect(uid.status).toBe(403);
    expect(uid.body.error).toMatchObject({ code: "app_confined", param: "uid" });
    expect((await as("POST", "/v3/apps/confined-a", { name: "Renamed" })).status).toBe(200);
    // The keys it makes are confined to its app; another app is out of its reach.
    expect((await as("POST", "/v3/api-keys", { app: "confined-b" })).status).toBe(404);
    const child = await as("POST", "/v3/api-keys", { scopes: ["events:read"] });
    expect(child.body).toMatchObject({ app: mine.id, scopes: ["events:read"] });
    const listed = (await as("GET", "/v3/api-keys?limit=100")).body.data;
    expect(listed.every((k: { app: string }) => k.app === mine.id)).toBe(true);
    expect(listed.length).toBe(2);

    // Deleting the app ends the keys confined to it.
    expect((await as("DELETE", "/v3/apps/confined-a")).status).toBe(200);
    expect((await as("GET", "/v3/apps")).status).toBe(401);
    expect((await gw.request("GET", "/v3/apps", { key: child.body.key })).status).toBe(401);
  });
});

describe("the listen socket", () => {
  it("needs endpoints:write before it opens", async () => {
    await gw.request("POST", "/v3/apps", { json: { uid: "listen-app", name: "Listen" } });
    const url = new URL(`${gw.url}/v3/listen?app=listen-app`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, {
        headers: {
          authorization: `Bearer ${single.get("endpoints:read")}`,
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
      });
      req.on("response", (res) => resolve(res.statusCode ?? 0));
      req.on("upgrade", () => resolve(101));
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
