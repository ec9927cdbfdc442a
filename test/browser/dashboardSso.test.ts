import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { deadPort } from "../support/ports.ts";

/**
 * Single sign-on to the dashboard against a real OpenID provider (oidc-provider, run here), in
 * Chromium: the authorization code flow with PKCE, a person's role from their group, a refused
 * domain, a person in no group, and a session that expires.
 */
const PEOPLE: Record<string, { email_verified: boolean; groups: string[] }> = {
  "alice@example.com": { email_verified: true, groups: ["herald-devs"] },
  "carol@example.com": { email_verified: true, groups: ["herald-viewers", "sales"] },
  "erin@example.com": { email_verified: true, groups: ["sales"] },
  "mallory@example.com": { email_verified: false, groups: ["herald-admins"] },
  "bob@other.com": { email_verified: true, groups: ["herald-admins"] },
};

let issuer: Server;
let gw: TestGateway;
let brief: TestGateway;
let browser: Browser;

async function startProvider(port: number, redirects: string[]): Promise<Server> {
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: "herald",
        client_secret: "herald-client-secret",
        redirect_uris: redirects,
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], groups: ["groups"] },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: sub, ...(PEOPLE[sub] ?? { email_verified: false, groups: [] }) }),
    }),
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ["a-test-cookie-key"] },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
  });
  const server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return server;
}

const oidcEnv = (issuerPort: number, port: number, ttl: string) => ({
  PORT: String(port),
  PUBLIC_URL: `http://127.0.0.1:${port}`,
  OIDC_ISSUER: `http://127.0.0.1:${issuerPort}`,
  OIDC_CLIENT_ID: "herald",
  OIDC_CLIENT_SECRET: "herald-client-secret",
  OIDC_SCOPES: "openid email groups",
  OIDC_ALLOWED_DOMAINS: "example.com",
  OIDC_ROLES: "herald-admins=admin,herald-devs=developer,herald-viewers=viewer",
  OIDC_DEFAULT_ROLE: "none",
  OIDC_SESSION_TTL: ttl,
});

beforeAll(async () => {
  const [issuerPort, port, briefPort] = [await deadPort(), await deadPort(), await deadPort()];
  issuer = await startProvider(
    issuerPort,
    [port, briefPort].map((p) => `http://127.0.0.1:${p}/sso/callback`),
  );
  [gw, brief, browser] = await Promise.all([
    startGateway(oidcEnv(issuerPort, port, "1h")),
    startGateway(oidcEnv(issuerPort, briefPort, "8s")),
    launchBrowser(),
  ]);
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await brief?.close();
  await new Promise((resolve) => issuer?.close(resolve));
});

/** From the dashboard's sign-in page through the provider's login and consent, back to Herald. */
async function signInAs(page: Page, url: string, email: string): Promise<void> {
  await page.goto(`${url}/dashboard`);
  await page.getByRole("link", { name: "Sign in with single sign-on" }).click();
  await page.locator('input[name="login"]').fill(email);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${url}/dashboard**`);
}

describe("single sign-on to the dashboard", () => {
  it("signs a developer in with write scopes but no keys, records it, and names them in the audit log", async () => {
    const { page } = await openPage(browser);
    page.setDefaultTimeout(15_000);
    await signInAs(page, gw.url, "alice@example.com");
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    await page.getByText("Signed in as alice@example.com").waitFor();

    const cookie = (await page.context().cookies()).find((c) => c.name === "herald_session")!;
    const as = {
      key: null,
      headers: { cookie: `${cookie.name}=${cookie.value}`, "herald-page": "dashboard" },
    };
    const session = await gw.request("GET", "/session", as);
    expect(session.body).toMatchObject({ kind: "dashboard", person: "alice@example.com" });
    expect(session.body.scopes).toEqual([
      "events:write",
      "endpoints:write",
      "apps:write",
      "event_types:write",
      "portal",
    ]);
    // A developer changes things, and is named for it; the audit log is not theirs to read.
    const made = await gw.request("POST", "/v3/apps", { ...as, json: { name: "By Alice" } });
    expect(made.status).toBe(201);
    expect((await gw.request("GET", "/v3/audit-log", as)).status).toBe(403);
    const log = (await gw.request("GET", "/v3/audit-log")).body.data;
    expect(log[0]).toMatchObject({
      action: "app.created",
      actor: { type: "person", id: expect.stringMatching(/^ses_/), name: "alice@example.com" },
    });
    expect(log[1]).toMatchObject({
      action: "session.signed_in",
      actor: { type: "person", name: "alice@example.com" },
      fields: ["developer"],
    });
  });

  it("gives a viewer read scopes only", async () => {
    const { page } = await openPage(browser);
    page.setDefaultTimeout(15_000);
    await signInAs(page, gw.url, "carol@example.com");
    await page.getByText("Signed in as carol@example.com").waitFor();
    await page
      .getByRole("navigation", { name: "Sections", exact: true })
      .getByRole("link", { name: "Apps" })
      .click();
    await page.getByRole("link", { name: /Acme/ }).first().waitFor();
    const cookie = (await page.context().cookies()).find((c) => c.name === "herald_session")!;
    const as = {
      key: null,
      headers: { cookie: `${cookie.name}=${cookie.value}`, "herald-page": "dashboard" },
    };
    expect((await gw.request("GET", "/v3/apps", as)).status).toBe(200);
    const refused = await gw.request("POST", "/v3/apps", { ...as, json: { name: "By Carol" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual([{ scope: "apps:write" }]);
  });

  it("refuses a domain not allowed, an email not verified, and a person in no group, saying why", async () => {
    for (const [email, why] of [
      ["bob@other.com", "bob@other.com is not of a domain allowed to sign in to this dashboard."],
      [
        "mallory@example.com",
        "The identity provider has not verified mallory@example.com: it cannot sign in.",
      ],
      ["erin@example.com", "erin@example.com is in no group that may sign in to this dashboard."],
    ] as const) {
      const { page } = await openPage(browser);
      page.setDefaultTimeout(15_000);
      await signInAs(page, gw.url, email);
      await page.getByText(why).waitFor();
      await page.getByRole("heading", { name: "Sign in to the Herald dashboard" }).waitFor();
      // Out of the address, and no session made.
      expect(new URL(page.url()).hash).toBe("");
      expect((await page.context().cookies()).some((c) => c.name === "herald_session")).toBe(false);
    }
    // Each refusal is on the record, by the email the provider gave.
    const refused = (await gw.request("GET", "/v3/audit-log?action=session.sign_in_refused")).body.data;
    expect(refused.map((r: { actor: { name: string } }) => r.actor.name).sort()).toEqual([
      "bob@other.com",
      "erin@example.com",
      "mallory@example.com",
    ]);
  });

  it("ends with OIDC_SESSION_TTL: the session is refused, and the dashboard asks to sign in again", async () => {
    const { page } = await openPage(browser);
    page.setDefaultTimeout(15_000);
    await signInAs(page, brief.url, "alice@example.com");
    await page.getByText("Signed in as alice@example.com").waitFor();
    const cookie = (await page.context().cookies()).find((c) => c.name === "herald_session")!;
    const as = {
      key: null,
      headers: { cookie: `${cookie.name}=${cookie.value}`, "herald-page": "dashboard" },
    };
    const ends = Date.parse((await brief.request("GET", "/session", as)).body.expires_at);
    // The browser drops the cookie then too (its Max-Age); the server refuses it whatever it holds.
    expect(cookie.expires * 1000).toBeLessThanOrEqual(ends + 1000);
    await new Promise((r) => setTimeout(r, Math.max(0, ends - Date.now() + 200)));
    const refused = await brief.request("GET", "/session", as);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe("This session has expired. Open a new link.");
    await page.reload();
    await page.getByRole("heading", { name: "Sign in to the Herald dashboard" }).waitFor();
    await page.getByRole("link", { name: "Sign in with single sign-on" }).waitFor();
  });

  it("refuses a callback that did not start here", async () => {
    const res = await fetch(`${gw.url}/sso/callback?code=forged&state=forged`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(decodeURIComponent(res.headers.get("location")!)).toContain(
      "This sign-in took too long or did not start here",
    );
    expect(((await (await fetch(`${gw.url}/sso`)).json()) as { enabled: boolean }).enabled).toBe(true);
  });
});
