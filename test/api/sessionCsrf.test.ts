import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { type RequestOptions, startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * A portal or dashboard cookie sent by another site's page: SameSite is the browser's promise,
 * so the gateway checks Herald-Page and Origin on every write the cookie authenticates, and on
 * POST and DELETE /session.
 */
let gw: TestGateway;
let endpoint = "";
const { open, as, portal } = browserSessions(() => gw);

beforeAll(async () => {
  gw = await startGateway({ PUBLIC_URL: "https://herald.example.com" });
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  endpoint = (
    await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://acme.example.com/hook" } })
  ).body.id;
});
afterAll(() => gw.close());

describe("a session's cookie, sent by another site's page", () => {
  const evil = "https://evil.example";

  it("changes nothing: without Herald-Page, with a form, or from another Origin (403)", async () => {
    const cookie = await open((await portal()).token);
    const path = `/v3/endpoints/${endpoint}`;
    const attempts: RequestOptions[] = [
      // A form post: browsers send no custom header with one.
      { key: null, headers: { cookie, origin: evil }, form: { description: "csrf" } },
      { key: null, headers: { cookie }, json: { description: "csrf" } },
      // The header with another site's Origin (its preflight is never answered; no matter).
      { key: null, headers: { ...as(cookie).headers, origin: evil }, json: { description: "csrf" } },
      { key: null, headers: { ...as(cookie).headers, origin: "null" }, json: { description: "csrf" } },
    ];
    for (const options of attempts) {
      const res = await gw.request("POST", path, options);
      expect(res.status, JSON.stringify(options.headers)).toBe(403);
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "cross_site_request" });
    }
    const now = await gw.request("GET", path);
    expect(now.body.description).not.toBe("csrf");
    // The page itself, on this origin: allowed.
    expect((await gw.request("POST", path, { ...as(cookie), json: { description: "page" } })).status).toBe(
      200,
    );
  });

  it("cannot open a session (login CSRF) or end one", async () => {
    const { token } = await portal();
    const tries: Record<string, string>[] = [{ origin: evil }, { origin: evil, "herald-page": "portal" }];
    for (const headers of tries) {
      const res = await gw.request("POST", "/session", { key: null, headers, form: { token } });
      expect(res.status).toBe(403);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    // The link is still unused: it opens from the page.
    const cookie = await open(token);
    const out = await gw.request("DELETE", "/session", { key: null, headers: { cookie, origin: evil } });
    expect(out.status).toBe(403);
    expect((await gw.request("GET", "/v3/apps/acme", as(cookie))).status).toBe(200);
  });

  it("is the __Host- cookie only: a cookie of the plain name, as a sibling subdomain could set, is not read", async () => {
    const cookie = await open((await portal()).token);
    const plain = cookie.replace(/^__Host-/, "");
    expect((await gw.request("GET", "/v3/apps/acme", as(plain))).status).toBe(401);
  });

  it("is read as sent: a value that is not ours, such as bad percent-encoding, is no session (401)", async () => {
    const res = await gw.request("GET", "/v3/apps/acme", as("__Host-herald_session=%E0"));
    expect(res.status).toBe(401);
    expect(res.body.error.type).toBe("authentication_error");
  });
});
