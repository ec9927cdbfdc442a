import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * The pages in Chromium, on one browser's one cookie: each says which page it is on every
 * call (`Herald-Page`), only the dashboard sends its API key, and a page whose session was
 * replaced by the other page's says so instead of working as the other one.
 */
let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startGateway(), launchBrowser()]);
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme Inc." } });
  await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://acme.example.com/hook" } });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

const portalLink = async () =>
  `${gw.url}/portal#token=${(await gw.request("POST", "/v3/apps/acme/portal-sessions", { json: {} })).body.token}`;
const dashboardToken = async () =>
  (await gw.request("POST", "/v3/dashboard-sessions", { json: {} })).body.token as string;

/** The API calls a page makes (not its HTML or assets), with their headers. */
function apiCalls(page: Page): Request[] {
  const calls: Request[] = [];
  page.on("request", (r) => {
    if (/\/(v3\/|session$)/.test(new URL(r.url()).pathname)) calls.push(r);
  });
  return calls;
}

const sections = (page: Page) => page.getByRole("navigation", { name: "Sections" });

/** Only the 401s the test caused, and nothing else, went wrong. */
function expectOnly401s(watched: WatchedPage): void {
  watched.expectClean([/status of 401/]);
}

describe("the pages' calls", () => {
  it("name their page; the portal never sends the API key the dashboard holds in the same tab", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    page.setDefaultTimeout(15_000);
    const calls = apiCalls(page);
    await page.goto(`${gw.url}/dashboard/apps`);
    await page.getByLabel("API key").fill(gw.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Acme Inc." }).waitFor();
    const fromDashboard = calls.splice(0);
    expect(fromDashboard.length).toBeGreaterThan(0);
    for (const call of fromDashboard) {
      expect(call.headers()["herald-page"], call.url()).toBe("dashboard");
      // Signed in with the key (GET /session, before, looked for a cookie).
      if (new URL(call.url()).pathname.startsWith("/v3/"))
        expect(call.headers().authorization, call.url()).toBe(`Bearer ${gw.key}`);
    }

    // The same tab (the key is still in its sessionStorage) opens a customer's portal link.
    await page.goto(await portalLink());
    await sections(page).getByRole("link", { name: "Events" }).click();
    await page.getByRole("heading", { name: "Events", level: 1 }).waitFor();
    const fromPortal = calls.splice(0);
    expect(fromPortal.map((c) => new URL(c.url()).pathname)).toContain("/session");
    for (const call of fromPortal) {
      expect(call.headers()["herald-page"], call.url()).toBe("portal");
      expect(call.headers().authorization, call.url()).toBeUndefined();
    }
    watched.expectClean();
    await watched.close();
  });
});

describe("one browser, both pages", () => {
  it("the dashboard says a portal link was opened since, and asks to sign in again", async () => {
    const watched = await openPage(browser);
    const dashboard = watched.page;
    dashboard.setDefaultTimeout(15_000);
    await dashboard.goto(`${gw.url}/dashboard/apps#token=${await dashboardToken()}`);
    await dashboard.getByRole("link", { name: "Acme Inc." }).waitFor();

    const portal = await watched.context.newPage();
    portal.setDefaultTimeout(15_000);
    await portal.goto(await portalLink());
    await sections(portal).getByRole("link", { name: "Events" }).waitFor();

    await sections(dashboard).getByRole("link", { name: "Events" }).click();
    await dashboard
      .getByText("This browser opened a customer portal since; sign in to the dashboard again.")
      .waitFor();
    await dashboard.getByLabel("API key").waitFor();
    // The portal goes on: the dashboard did not take its session.
    await sections(portal).getByRole("link", { name: "Events" }).click();
    await portal.getByRole("heading", { name: "Events", level: 1 }).waitFor();
    expectOnly401s(watched);
    await watched.close();
  });

  it("the portal says the dashboard was signed in to since, and goes no further", async () => {
    const watched = await openPage(browser);
    const portal = watched.page;
    portal.setDefaultTimeout(15_000);
    await portal.goto(await portalLink());
    await sections(portal).getByRole("link", { name: "Events" }).waitFor();

    const dashboard = await watched.context.newPage();
    dashboard.setDefaultTimeout(15_000);
    await dashboard.goto(`${gw.url}/dashboard/apps#token=${await dashboardToken()}`);
    await dashboard.getByRole("link", { name: "Acme Inc." }).waitFor();

    await sections(portal).getByRole("link", { name: "Events" }).click();
    await portal
      .getByText("This browser signed in to the Herald dashboard since; open a new portal link.")
      .waitFor();
    expect(await sections(portal).count()).toBe(0);
    await dashboard.reload();
    await dashboard.getByRole("link", { name: "Acme Inc." }).waitFor();
    expectOnly401s(watched);
    await watched.close();
  });

  it("a portal link opened on the dashboard is refused there, and still opens the portal", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    page.setDefaultTimeout(15_000);
    const link = await portalLink();
    await page.goto(link.replace("/portal#", "/dashboard#"));
    await page.getByText("This is a customer portal link, not a dashboard sign-in link").waitFor();
    await page.goto(link);
    await sections(page).getByRole("link", { name: "Events" }).waitFor();
    expectOnly401s(watched);
    await watched.close();
  });
});
