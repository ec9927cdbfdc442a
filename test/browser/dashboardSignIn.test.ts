import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage } from "../support/browser.ts";
import { expectAccessible } from "../support/dashboard.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * Signing in to the dashboard: with an API key (this tab only), through a dashboard session
 * link, and back to the form when the key stops working.
 */
let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startGateway(), launchBrowser()]);
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme Inc." } });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("signing in to the dashboard", () => {
  it("refuses a wrong API key with the API's message, and signs in with the right one", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    page.setDefaultTimeout(15_000);
    await page.goto(`${gw.url}/dashboard`);
    const keyField = page.getByLabel("API key");
    await keyField.fill("hk_not_a_real_key_0123456789abcdef");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Invalid API key.").waitFor();
    expect(await keyField.getAttribute("aria-invalid")).toBe("true");
    // The wrong key's 401, on purpose: that one, and nothing else, so far.
    await expect.poll(() => [...watched.problems]).toEqual([expect.stringMatching(/status of 401/)]);
    watched.problems.splice(0);
    await expectAccessible(page);
    await watched.screenshot("dashboard-sign-in");
    await keyField.fill(gw.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    await page.getByText("No attempts in the last hour").waitFor();
    // Signing out forgets the key: a reload asks for it again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You signed out.").waitFor();
    await page.reload();
    await keyField.waitFor();
    watched.expectClean();
    await watched.close();
  });

  it("signs in through a dashboard session link, and stays signed in across reloads", async () => {
    const res = await gw.request("POST", "/v3/dashboard-sessions", { json: {} });
    expect(res.status).toBe(201);
    const watched = await openPage(browser);
    const { page } = watched;
    page.setDefaultTimeout(15_000);
    await page.goto(`${gw.url}/dashboard/apps#token=${res.body.token}`);
    await page.getByRole("heading", { name: "Apps", level: 1 }).waitFor();
    expect(page.url()).toBe(`${gw.url}/dashboard/apps`);
    await page.getByRole("link", { name: "Acme Inc." }).waitFor();
    await page.reload();
    await page.getByRole("link", { name: "Acme Inc." }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You signed out.").waitFor();
    await page.reload();
    await page.getByLabel("API key").waitFor();
    watched.expectClean();
    await watched.close();
  });

  it("goes back to signing in, saying why, when its key is revoked", async () => {
    const made = await gw.request("POST", "/v3/api-keys", { json: { name: "short-lived" } });
    const watched = await openPage(browser);
    const { page } = watched;
    page.setDefaultTimeout(15_000);
    await page.goto(`${gw.url}/dashboard/events`);
    await page.getByLabel("API key").fill(made.body.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Events", level: 1 }).waitFor();
    await gw.request("DELETE", `/v3/api-keys/${made.body.id}`);
    // The list polls; its next request is refused.
    await page.getByText("This API key has been revoked.").waitFor();
    await page.getByLabel("API key").waitFor();
    // The refused requests (any poll in flight when the key went), and nothing else.
    expect(watched.problems.length).toBeGreaterThan(0);
    expect(watched.problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
    await watched.close();
  });
});
