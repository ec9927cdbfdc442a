import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * The portal and the dashboard share one session cookie in a browser, and say which page calls
 * (`Herald-Page`). A session of the other kind is refused, never used; a dashboard session,
 * a link valid for a limited time, cannot make lasting credentials.
 */
let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
});
afterAll(() => gw.close());

type Page = "portal" | "dashboard";

const portalLink = async () =>
  (await gw.request("POST", "/v3/apps/acme/portal-sessions", { json: {} })).body.token as string;
const dashboardLink = async () =>
  (await gw.request("POST", "/v3/dashboard-sessions", { json: {} })).body.token as string;
const link = (kind: Page) => (kind === "portal" ? portalLink() : dashboardLink());

/** A request as the page makes it: its cookie (if any) and its name, no API key. */
const from = (page: Page | null, cookie?: string) => ({
  key: null,
  headers: { ...(page ? { "herald-page": page } : {}), ...(cookie ? { cookie } : {}) },
});

async function open(token: string, page: Page | null): Promise<string> {
  const res = await gw.request("POST", "/session", { ...from(page), json: { token } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

const OTHER: Record<Page, { kind: Page; session: RegExp; link: RegExp }> = {
  dashboard: {
    kind: "portal",
    session: /opened a customer portal since; sign in to the dashboard again/,
    link: /customer portal link, not a dashboard sign-in link: open it under \/portal/,
  },
  portal: {
    kind: "dashboard",
    session: /signed in to the Herald dashboard since; open a new portal link/,
    link: /dashboard sign-in link, not a portal link: open it under \/dashboard/,
  },
};

describe.each(["dashboard", "portal"] as const)("the %s page", (page) => {
  const other = OTHER[page].kind;

  it(`is refused a session of the ${other}, with why, on every call and at GET /session`, async () => {
    // The browser opened the other page's link since: the cookie now holds that session.
    const cookie = await open(await link(other), other);
    for (const path of ["/v3/endpoints", "/v3/apps/acme", "/session"]) {
      const res = await gw.request("GET", path, from(page, cookie));
      expect(res.status, path).toBe(401);
      expect(res.body.error.type).toBe("authentication_error");
      expect(res.body.error.message).toMatch(OTHER[page].session);
    }
    // The other page, and any caller that does not say, still use it.
    expect((await gw.request("GET", "/v3/apps/acme", from(other, cookie))).status).toBe(200);
    expect((await gw.request("GET", "/session", from(other, cookie))).body.kind).toBe(other);
    expect((await gw.request("GET", "/v3/apps/acme", from(null, cookie))).status).toBe(200);
  });

  it(`keeps its own session: GET /session and calls work with the header`, async () => {
    const cookie = await open(await link(page), page);
    expect((await gw.request("GET", "/session", from(page, cookie))).body).toMatchObject({ kind: page });
    expect((await gw.request("GET", "/v3/endpoints", from(page, cookie))).status).toBe(200);
  });

  it(`refuses a ${other} link at POST /session, saying where it opens, and leaves it unused`, async () => {
    const token = await link(other);
    const res = await gw.request("POST", "/session", { ...from(page), json: { token } });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(OTHER[page].link);
    expect(res.headers.get("set-cookie")).toBeNull();
    // Still good where it belongs.
    const cookie = await open(token, other);
    expect((await gw.request("GET", "/session", from(other, cookie))).body.kind).toBe(other);
    // A used link is just that, whichever page opens it.
    const again = await gw.request("POST", "/session", { ...from(page), json: { token } });
    expect(again.body.error.message).toMatch(/invalid, expired, or was already opened/);
  });

  it(`does not sign the browser out of the ${other} when it signs out`, async () => {
    const cookie = await open(await link(other), other);
    const out = await gw.request("DELETE", "/session", from(page, cookie));
    expect(out.body).toEqual({ object: "session", deleted: false });
    expect(out.headers.get("set-cookie")).toBeNull();
    expect((await gw.request("GET", "/session", from(other, cookie))).status).toBe(200);
    const own = await gw.request("DELETE", "/session", from(other, cookie));
    expect(own.body).toEqual({ object: "session", deleted: true });
  });
});

describe("a dashboard session", () => {
  it("cannot make or revoke API keys, nor make dashboard links (403); an API key can", async () => {
    const cookie = await open(await dashboardLink(), "dashboard");
    const made = await gw.request("POST", "/v3/api-keys", { json: { name: "spare" } });
    expect(made.status).toBe(201);
    for (const [method, path] of [
      ["POST", "/v3/api-keys"],
      ["DELETE", `/v3/api-keys/${made.body.id}`],
      ["POST", "/v3/dashboard-sessions"],
    ] as const) {
      const res = await gw.request(method, path, {
        ...from("dashboard", cookie),
        ...(method === "POST" ? { json: {} } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: "forbidden", message: expect.stringMatching(/API key/) });
    }
    // The key is still good, and the session still does the rest of the dashboard's work.
    expect((await gw.request("GET", "/v3/apps", { key: made.body.key })).status).toBe(200);
    expect((await gw.request("GET", "/v3/api-keys", from("dashboard", cookie))).status).toBe(200);
    const portal = await gw.request("POST", "/v3/apps/acme/portal-sessions", {
      ...from("dashboard", cookie),
      json: {},
    });
    expect(portal.status).toBe(201);
    expect((await gw.request("DELETE", `/v3/api-keys/${made.body.id}`)).status).toBe(200);
  });

  it("is documented: those operations say so, and 403 is among their answers", async () => {
    const doc = (await gw.request("GET", "/v3/openapi.json", { key: null })).body;
    for (const [path, method] of [
      ["/v3/api-keys", "post"],
      ["/v3/api-keys/{id}", "delete"],
      ["/v3/dashboard-sessions", "post"],
    ] as const) {
      const op = doc.paths[path][method];
      expect(op.description, `${method} ${path}`).toMatch(/Only an API key/);
      expect(Object.keys(op.responses)).toContain("403");
    }
    for (const method of ["get", "post", "delete"])
      expect(doc.paths["/session"][method].parameters.map((p: { name: string }) => p.name)).toContain(
        "Herald-Page",
      );
  });
});
