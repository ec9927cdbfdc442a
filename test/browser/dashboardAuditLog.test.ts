import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.ts";
import { expectAccessible, signedIn } from "../support/dashboard.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/** The dashboard's audit log: the account's changes, newest first, filtered in the address. */
let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startGateway(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("the dashboard's audit log", () => {
  it("lists who changed what, filters by action and actor, and says when nothing matches", async () => {
    const app = await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
    const key = await gw.request("POST", "/v3/api-keys", { json: { name: "ci", scopes: ["apps:write"] } });
    await gw.request("POST", "/v3/apps/acme", { key: key.body.key, json: { name: "Acme Inc." } });

    const { watched, page, sections } = await signedIn(browser, gw.url, gw.key);
    await sections.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    const table = page.getByRole("table", { name: "Audit log" });
    const rows = table.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(4);
    // Newest first: the rename by the narrow key, the key, the app, and the operator's account.
    expect(await rows.locator("td:nth-child(2)").allTextContents()).toEqual([
      "app.updated",
      "api_key.created",
      "app.created",
      "account.created",
    ]);
    await expect.poll(() => rows.first().textContent()).toContain(key.body.id);
    expect(await rows.first().textContent()).toContain(app.body.id);
    await expectAccessible(page);

    await page.getByLabel("Action").fill("app.");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await expect.poll(() => rows.count()).toBe(2);
    expect(new URL(page.url()).searchParams.get("action")).toBe("app.");
    await page.getByLabel("Actor").fill(key.body.id);
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator("td:nth-child(2)").textContent()).toBe("app.updated");
    await page.getByLabel("Object").fill("app_nothing");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("No records match").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(() => rows.count()).toBe(4);
    await watched.screenshot("dashboard-audit-log");
    watched.expectClean();
  });
});
