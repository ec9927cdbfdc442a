import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";

let gw: TestGateway;
const ids = { acmeEndpoint: "", otherEndpoint: "", acmeEvent: "", otherEvent: "" };

beforeAll(async () => {
  gw = await startGateway({ PUBLIC_URL: "https://herald.example.com" });
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  await gw.request("POST", "/v3/apps", { json: { uid: "other", name: "Other" } });
  await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid" } });
  for (const app of ["acme", "other"] as const) {
    ids[`${app}Endpoint`] = (
      await gw.request("POST", "/v3/endpoints", { json: { app, url: `https://${app}.example.com/hook` } })
    ).body.id;
    ids[`${app}Event`] = (
      await gw.request("POST", "/v3/events", { json: { app, type: "invoice.paid", data: { app } } })
    ).body.id;
  }
});
afterAll(() => gw.close());

const { open, as, portal } = browserSessions(() => gw);

describe("portal sessions", () => {
  it("make a link to the portal of one app, valid for the time asked (1 hour by default)", async () => {
    const session = await portal();
    expectMatches(session, "PortalSession");
    expect(session.url).toBe(`https://herald.example.com/portal#token=${session.token}`);
    const hours = (Date.parse(session.expires_at) - Date.now()) / 3600_000;
    expect(hours).toBeGreaterThan(0.99);
    expect(hours).toBeLessThanOrEqual(1);
    for (const expires_in of [59, 604_801]) {
      const res = await gw.request("POST", "/v3/apps/acme/portal-sessions", { json: { expires_in } });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe("expires_in");
    }
  });

  it("exchange the token once for an HttpOnly, SameSite=Strict cookie, keeping only hashes", async () => {
    const session = await portal({ expires_in: 600 });
    const res = await gw.request("POST", "/session", {
      key: null,
      headers: { "herald-page": "portal" },
      json: { token: session.token },
    });
    expect(res.body).toMatchObject({ object: "session", kind: "portal", read_only: false });
    const cookie = res.headers.get("set-cookie")!;
    // PUBLIC_URL is https: the cookie is Secure and `__Host-` named.
    expect(cookie).toMatch(/^__Host-herald_session=[A-Za-z0-9_-]{40,}; Path=\/; /);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Secure");
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeGreaterThan(590);
    // The link works once: a leaked link that was opened opens nothing.
    expect(
      (
        await gw.request("POST", "/session", {
          key: null,
          headers: { "herald-page": "portal" },
          json: { token: session.token },
        })
      ).status,
    ).toBe(401);
    const row = await gw.gateway.deps.prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(session.token);
    expect(stored).not.toContain(cookie.split(";")[0]!.split("=")[1]!);
  });

  it("see their own app's objects and nothing of another app's (404)", async () => {
    const cookie = await open((await portal()).token);
    const endpoints = await gw.request("GET", "/v3/endpoints", as(cookie));
    expect(endpoints.body.data.map((e: { id: string }) => e.id)).toEqual([ids.acmeEndpoint]);
    expect((await gw.request("GET", `/v3/endpoints/${ids.acmeEndpoint}`, as(cookie))).status).toBe(200);
    expect((await gw.request("GET", "/v3/apps/acme", as(cookie))).status).toBe(200);
    const events = await gw.request("GET", "/v3/events", as(cookie));
    expect(events.body.data.map((e: { id: string }) => e.id)).toEqual([ids.acmeEvent]);
    expect((await gw.request("GET", "/v3/event-types", as(cookie))).body.data.length).toBeGreaterThan(0);
    const byEndpoint = await gw.request("GET", `/v3/events?endpoint=${ids.acmeEndpoint}`, as(cookie));
    expect(byEndpoint.status).toBe(200);
    const health = await gw.request("GET", "/v3/stats/endpoints", as(cookie));
    expect(health.body.data.map((e: { endpoint: string }) => e.endpoint)).toEqual([ids.acmeEndpoint]);

    for (const [method, path, json] of [
      ["GET", "/v3/apps/other", undefined],
      ["GET", `/v3/endpoints/${ids.otherEndpoint}`, undefined],
      ["GET", `/v3/endpoints/${ids.otherEndpoint}/secret`, undefined],
      ["POST", `/v3/endpoints/${ids.otherEndpoint}`, { description: "mine now" }],
      ["DELETE", `/v3/endpoints/${ids.otherEndpoint}`, undefined],
      ["POST", `/v3/endpoints/${ids.otherEndpoint}/replay`, {}],
      ["POST", `/v3/endpoints/${ids.otherEndpoint}/test`, {}],
      ["POST", `/v3/endpoints/${ids.acmeEndpoint}/replay`, { event: ids.otherEvent }],
      ["GET", `/v3/events/${ids.otherEvent}`, undefined],
      ["GET", "/v3/events?app=other", undefined],
      ["GET", "/v3/endpoints?app=other", undefined],
      ["GET", "/v3/attempts?app=other", undefined],
      ["GET", `/v3/events?endpoint=${ids.otherEndpoint}`, undefined],
      ["GET", `/v3/events?endpoint=${ids.otherEndpoint}&status=pending`, undefined],
      ["GET", "/v3/stats/endpoints?app=other", undefined],
      ["POST", "/v3/endpoints", { app: "other", url: "https://x.example.com" }],
      ["POST", "/v3/events", { app: "other", type: "invoice.paid", data: {} }],
    ] as const) {
      const res = await gw.request(method, path, { ...as(cookie), ...(json ? { json } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe("resource_missing");
    }
    // Another app's endpoint is untouched.
    expect((await gw.request("GET", `/v3/endpoints/${ids.otherEndpoint}`)).body.description).toBe("");
  });

  it("do what the portal shows for their app", async () => {
    const cookie = await open((await portal()).token);
    const created = await gw.request("POST", "/v3/endpoints", {
      ...as(cookie),
      json: { app: "acme", url: "https://new.example.com" },
    });
    expect(created.status).toBe(201);
    expect(
      (await gw.request("POST", `/v3/endpoints/${created.body.id}/secret/rotate`, as(cookie))).status,
    ).toBe(200);
    expect(
      (await gw.request("POST", `/v3/endpoints/${created.body.id}/replay`, { ...as(cookie), json: {} }))
        .status,
    ).toBe(202);
    expect((await gw.request("DELETE", `/v3/endpoints/${created.body.id}`, as(cookie))).status).toBe(200);
  });

  it("never get a response remembered for an Idempotency-Key the account used", async () => {
    const key = { "idempotency-key": "shared-key" };
    const body = { description: "changed by the account" };
    const first = await gw.request("POST", `/v3/endpoints/${ids.otherEndpoint}`, {
      json: body,
      headers: key,
    });
    expect(first.status).toBe(200);
    const cookie = await open((await portal()).token);
    const replay = await gw.request("POST", `/v3/endpoints/${ids.otherEndpoint}`, {
      json: body,
      key: null,
      headers: { ...key, ...as(cookie).headers },
    });
    expect(replay.status).toBe(404);
    expect(replay.headers.get("idempotent-replayed")).toBeNull();
  });

  it("cannot use account-level operations (403)", async () => {
    const cookie = await open((await portal()).token);
    for (const [method, path] of [
      ["GET", "/v3/apps"],
      ["POST", "/v3/apps"],
      ["POST", "/v3/event-types"],
      ["POST", "/v3/json-schema/validate"],
      ["GET", "/v3/api-keys"],
      ["POST", "/v3/apps/acme/portal-sessions"],
      ["DELETE", "/v3/apps/acme/portal-sessions"],
      ["POST", "/v3/dashboard-sessions"],
    ] as const) {
      const res = await gw.request(method, path, {
        ...as(cookie),
        ...(method === "POST" ? { json: {} } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });

  it("when read-only, can read and change nothing", async () => {
    const cookie = await open((await portal({ read_only: true })).token);
    expect((await gw.request("GET", "/v3/endpoints", as(cookie))).status).toBe(200);
    const write = await gw.request("POST", "/v3/endpoints", {
      ...as(cookie),
      json: { app: "acme", url: "https://ro.example.com" },
    });
    expect(write.status).toBe(403);
    expect((await gw.request("DELETE", `/v3/endpoints/${ids.acmeEndpoint}`, as(cookie))).status).toBe(403);
    // Nor read the signing secret, with which its holder could forge webhooks.
    const secret = await gw.request("GET", `/v3/endpoints/${ids.acmeEndpoint}/secret`, as(cookie));
    expect(secret.status).toBe(403);
    expect(JSON.stringify(secret.body)).not.toContain("whsec_");
  });

  it("end when revoked, when expired, and when signed out (401)", async () => {
    const revoked = await open((await portal()).token);
    const revocation = await gw.request("DELETE", "/v3/apps/acme/portal-sessions");
    expect(revocation.body).toMatchObject({
      object: "portal_session_revocation",
      revoked: expect.any(Number),
    });
    expect(revocation.body.revoked).toBeGreaterThan(0);
    expect((await gw.request("GET", "/v3/endpoints", as(revoked))).status).toBe(401);

    const made = await portal({ expires_in: 60 });
    const expired = await open(made.token);
    await gw.gateway.deps.prisma.session.update({
      where: { id: made.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const res = await gw.request("GET", "/v3/endpoints", as(expired));
    expect(res.status).toBe(401);
    expect(res.body.error.type).toBe("authentication_error");

    const signedOut = await open((await portal()).token);
    const out = await gw.request("DELETE", "/session", as(signedOut));
    expect(out.body).toEqual({ object: "session", deleted: true });
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await gw.request("GET", "/v3/endpoints", as(signedOut))).status).toBe(401);
    expect(
      (
        await gw.request("POST", "/session", {
          key: null,
          headers: { "herald-page": "portal" },
          json: { token: "nope" },
        })
      ).status,
    ).toBe(401);
  });
});

describe("dashboard sessions", () => {
  it("sign a browser in to the whole account", async () => {
    const made = await gw.request("POST", "/v3/dashboard-sessions", { json: { expires_in: 600 } });
    expect(made.status).toBe(201);
    expectMatches(made.body, "DashboardSession");
    expect(made.body.url).toBe(`https://herald.example.com/dashboard#token=${made.body.token}`);
    const cookie = await open(made.body.token, "dashboard");
    const apps = await gw.request("GET", "/v3/apps", as(cookie, "dashboard"));
    expect(apps.body.data.map((a: { uid: string }) => a.uid).sort()).toEqual(["acme", "other"]);
    expect((await gw.request("GET", `/v3/events/${ids.otherEvent}`, as(cookie, "dashboard"))).status).toBe(
      200,
    );
  });

  it("are refused to another account", async () => {
    const otherKey = await gw.newAccount("Someone else");
    const made = await gw.request("POST", "/v3/dashboard-sessions", { key: otherKey, json: {} });
    const cookie = await open(made.body.token, "dashboard");
    expect((await gw.request("GET", "/v3/apps", as(cookie, "dashboard"))).body.data).toEqual([]);
    expect(
      (await gw.request("GET", `/v3/endpoints/${ids.acmeEndpoint}`, as(cookie, "dashboard"))).status,
    ).toBe(404);
  });
});
