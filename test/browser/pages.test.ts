import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_CSP, DEFAULT_WEB_DIST } from "../../services/api-gateway/src/pages.ts";
import { launchBrowser, openPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  gw = await startGateway();
  browser = await launchBrowser();
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

async function portalLink(): Promise<string> {
  const res = await gw.request("POST", "/v3/apps/acme/portal-sessions", { json: {} });
  expect(res.status).toBe(201);
  return `${gw.url}/portal#token=${res.body.token}`;
}

describe("serving the pages", () => {
  it("serves each page under its path with a strict Content-Security-Policy", async () => {
    for (const path of ["/portal", "/portal/endpoints/ep_x", "/dashboard", "/dashboard/apps"]) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/text\/html/);
      expect(res.headers.get("content-security-policy")).toBe(APP_CSP);
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(await res.text()).toContain('<div id="root">');
    }
    expect(APP_CSP).toContain("script-src 'self'");
    expect(APP_CSP).not.toContain("unsafe-inline");
  });

  it("serves hashed assets as immutable, and nothing from another origin", async () => {
    const html = await (await fetch(`${gw.url}/portal`)).text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
      .map((m) => m[1]!)
      .filter((u) => u !== "data:,");
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.startsWith("/ui/assets/"), asset).toBe(true);
      const res = await fetch(`${gw.url}${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("cache-control")).toMatch(/immutable/);
    }
    expect((await fetch(`${gw.url}/ui/assets/nope.js`)).status).toBe(404);
  });

  it("says how to build the pages when they are missing, rather than a bare 404", async () => {
    const unbuilt = await startGateway({ WEB_DIST: "/nonexistent/herald-web" });
    try {
      const res = await fetch(`${unbuilt.url}/dashboard`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("pnpm --filter @herald/web build");
    } finally {
      await unbuilt.close();
    }
  });

  it("keeps each page's first load under 300 KB of compressed JavaScript", () => {
    for (const page of ["portal", "dashboard"]) {
      const html = readFileSync(join(DEFAULT_WEB_DIST, `${page}.html`), "utf8");
      const scripts = [...html.matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
      expect(scripts.length, page).toBeGreaterThan(0);
      const gzipped = scripts.reduce(
        (sum, file) => sum + gzipSync(readFileSync(join(DEFAULT_WEB_DIST, file))).length,
        0,
      );
      expect(gzipped, `${page}: ${gzipped} bytes`).toBeLessThan(300 * 1024);
    }
  });
});

describe("opening a portal link", () => {
  it("exchanges the token for a cookie, takes it out of the address bar, and survives a reload", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(await portalLink());
    await page.getByRole("navigation", { name: "Sections" }).waitFor();
    expect(page.url()).toBe(`${gw.url}/portal`);
    const cookies = await watched.context.cookies();
    const session = cookies.find((c) => c.name === "herald_session");
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe("Strict");
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).waitFor();
    watched.expectClean();
    await watched.close();
  });

  it("opens a link once: a second browser with the same link is told to ask for a new one", async () => {
    const link = await portalLink();
    const first = await openPage(browser);
    await first.page.goto(link);
    await first.page.getByRole("navigation", { name: "Sections" }).waitFor();
    const second = await openPage(browser);
    await second.page.goto(link);
    await second.page
      .getByRole("alert")
      .getByText(/already opened/)
      .waitFor();
    await first.close();
    await second.close();
  });
});
