import { readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";

/**
 * What a session came from bounds it: nothing a dashboard session makes outlives it, revoking a
 * key ends what it led to, and dashboard sessions are listed and revocable.
 */
let gw: TestGateway;
const { open, as, portal } = browserSessions(() => gw);

beforeAll(async () => {
  gw = await startGateway({ PUBLIC_URL: "https://herald.example.com" });
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
});
afterAll(() => gw.close());

describe("what a session may make, and what ends it", () => {
  it("a portal link made from a dashboard session ends when that session does, at the latest", async () => {
    const made = await gw.request("POST", "/v3/dashboard-sessions", { json: { expires_in: 60 } });
    const dashboard = await open(made.body.token, "dashboard");
    const portalLink = await gw.request("POST", "/v3/apps/acme/portal-sessions", {
      ...as(dashboard, "dashboard"),
      json: { expires_in: 604_800 },
    });
    expect(portalLink.status).toBe(201);
    expect(Date.parse(portalLink.body.expires_at)).toBeLessThanOrEqual(Date.parse(made.body.expires_at));
  });

  it("revoking an API key ends the sessions it made, and what they made", async () => {
    const key = (await gw.request("POST", "/v3/api-keys", { json: { name: "to revoke" } })).body;
    const viaKey = async (path: string, json: object) =>
      (await gw.request("POST", path, { key: key.key, json })).body.token as string;
    const dashboard = await open(await viaKey("/v3/dashboard-sessions", {}), "dashboard");
    const portalOfKey = await open(await viaKey("/v3/apps/acme/portal-sessions", {}));
    const child = await gw.request("POST", "/v3/apps/acme/portal-sessions", {
      ...as(dashboard, "dashboard"),
      json: {},
    });
    const portalOfDashboard = await open(child.body.token);
    // Another key's session is not touched.
    const kept = await open((await portal()).token);
    for (const [cookie, page] of [
      [dashboard, "dashboard"],
      [portalOfKey, "portal"],
      [portalOfDashboard, "portal"],
      [kept, "portal"],
    ] as const)
      expect((await gw.request("GET", "/v3/apps/acme", as(cookie, page))).status).toBe(200);

    expect((await gw.request("DELETE", `/v3/api-keys/${key.id}`, { key: key.key })).status).toBe(200);
    for (const [cookie, page] of [
      [dashboard, "dashboard"],
      [portalOfKey, "portal"],
      [portalOfDashboard, "portal"],
    ] as const)
      expect((await gw.request("GET", "/v3/apps/acme", as(cookie, page))).status).toBe(401);
    expect((await gw.request("GET", "/v3/apps/acme", as(kept))).status).toBe(200);
  });

  it("dashboard sessions are listed, and revoking one ends it and the portal sessions it made", async () => {
    const made = await gw.request("POST", "/v3/dashboard-sessions", { json: {} });
    const listed = await gw.request("GET", "/v3/dashboard-sessions?limit=100");
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((s: { id: string }) => s.id === made.body.id);
    expectMatches(entry, "DashboardSessionListed");
    expect(entry).toMatchObject({
      object: "dashboard_session",
      opened_at: null,
      expires_at: made.body.expires_at,
    });

    const dashboard = await open(made.body.token, "dashboard");
    const child = await gw.request("POST", "/v3/apps/acme/portal-sessions", {
      ...as(dashboard, "dashboard"),
      json: {},
    });
    const portalCookie = await open(child.body.token);
    const revoked = await gw.request("DELETE", `/v3/dashboard-sessions/${made.body.id}`);
    expect(revoked.body).toEqual({ id: made.body.id, object: "dashboard_session", deleted: true });
    expect((await gw.request("GET", "/v3/apps/acme", as(dashboard, "dashboard"))).status).toBe(401);
    expect((await gw.request("GET", "/v3/apps/acme", as(portalCookie))).status).toBe(401);
    const after = await gw.request("GET", "/v3/dashboard-sessions?limit=100");
    expect(after.body.data.map((s: { id: string }) => s.id)).not.toContain(made.body.id);
    expect((await gw.request("DELETE", `/v3/dashboard-sessions/${made.body.id}`)).status).toBe(404);
  });
});

describe("a session whose origin ended", () => {
  it("ends with its key even when made in the moment of the revocation", async () => {
    const key = (await gw.request("POST", "/v3/api-keys", { json: { name: "racing" } })).body;
    const made = await gw.request("POST", "/v3/dashboard-sessions", { key: key.key, json: {} });
    // As if the revocation's sweep ran just before this session's row was written.
    await gw.gateway.deps.prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
    const res = await gw.request("POST", "/session", {
      key: null,
      headers: { "herald-page": "dashboard" },
      json: { token: made.body.token },
    });
    const cookie = res.headers.get("set-cookie")?.split(";")[0];
    const after = cookie ? await gw.request("GET", "/v3/apps", as(cookie, "dashboard")) : res;
    expect(after.status).toBe(401);
  });

  it("ends with the dashboard session that made it when that one signs out", async () => {
    const made = await gw.request("POST", "/v3/dashboard-sessions", { json: {} });
    const dashboard = await open(made.body.token, "dashboard");
    const child = await gw.request("POST", "/v3/apps/acme/portal-sessions", {
      ...as(dashboard, "dashboard"),
      json: {},
    });
    const portalCookie = await open(child.body.token);
    expect((await gw.request("GET", "/v3/apps/acme", as(portalCookie))).status).toBe(200);
    expect((await gw.request("DELETE", "/session", as(dashboard, "dashboard"))).body.deleted).toBe(true);
    expect((await gw.request("GET", "/v3/apps/acme", as(portalCookie))).status).toBe(401);
  });
});

describe("sessions opened before their lineage was recorded", () => {
  it("end at migration 0012; those that have a key stay", async () => {
    const old = await portal();
    const before = await open(old.token);
    const after = await open((await portal()).token);
    const db = new pg.Client({ connectionString: gw.databaseUrl });
    await db.connect();
    try {
      // As a session made before 0011 is: no key, no parent.
      await db.query("UPDATE sessions SET key_id = NULL WHERE id = $1", [old.id]);
      const migration = join(
        import.meta.dirname,
        "../../packages/db/migrations/0012_end_sessions_without_lineage.sql",
      );
      await db.query(await readFile(migration, "utf8"));
    } finally {
      await db.end();
    }
    expect((await gw.request("GET", "/v3/apps/acme", as(before))).status).toBe(401);
    expect((await gw.request("GET", "/v3/apps/acme", as(after))).status).toBe(200);
  });
});
