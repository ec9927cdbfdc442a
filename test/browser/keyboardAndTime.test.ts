import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { portalLink } from "../support/portal.ts";

/**
 * What every view relies on: it can be used from the keyboard alone, with a visible focus,
 * and times read in the viewer's zone with UTC a hover away. The browser runs in Paris
 * (UTC+1 in November), so a time in UTC would read an hour off.
 */
let gw: TestGateway;
let browser: Browser;
let createdAt: string;

beforeAll(async () => {
  gw = await startGateway();
  browser = await launchBrowser();
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  const ep = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: "https://example.com/hook", description: "Orders" },
  });
  expect(ep.status).toBe(201);
  createdAt = ep.body.created_at;
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("keyboard", () => {
  it("skips to the content, moves through the sections, and shows where focus is", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(await portalLink(gw, "acme"));
    await page.getByRole("heading", { name: "Endpoints", level: 1 }).waitFor();

    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    await expect.poll(() => skip.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    const outline = await skip.evaluate(
      (el) => el.ownerDocument.defaultView?.getComputedStyle(el).outlineStyle,
    );
    expect(outline).not.toBe("none");
    await page.keyboard.press("Enter");
    const main = page.locator("#main");
    expect(await main.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);

    // From the top again: Tab past the skip link to the sections, Enter opens one.
    await main.evaluate((el) => (el.ownerDocument.activeElement as { blur?: () => void } | null)?.blur?.());
    const catalog = page.getByRole("link", { name: "Event catalog" });
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press("Tab");
      if (await catalog.evaluate((el) => el === el.ownerDocument.activeElement)) break;
    }
    expect(await catalog.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(
      await catalog.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).outlineStyle),
    ).not.toBe("none");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Event catalog", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/portal/catalog");
    watched.expectClean();
    await watched.close();
  });
});

describe("times", () => {
  it("reads in the viewer's time zone, with the UTC time on hover", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(await portalLink(gw, "acme"));
    await page
      .getByRole("link", { name: /Orders|example\.com/ })
      .first()
      .click();
    const created = page.locator(`time[datetime="${createdAt}"]`).first();
    await created.waitFor();
    const paris = new Intl.DateTimeFormat("en-GB", {
      dateStyle: "medium",
      timeStyle: "medium",
      timeZone: "Europe/Paris",
    }).format(new Date(createdAt));
    expect(await created.textContent()).toBe(paris);
    const utc = createdAt.replace("T", " ").replace("Z", " UTC");
    expect(await created.getAttribute("title")).toContain(utc);
    watched.expectClean();
    await watched.close();
  });
});
