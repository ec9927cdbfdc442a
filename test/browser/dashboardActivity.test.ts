import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.ts";
import { expectAccessible, REFRESHED, signedIn as signIn } from "../support/dashboard.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Deliveries as the dashboard shows them: the overview's chart and endpoint health move while
 * events go out, and the events and attempts across apps filter down to one app's.
 */
let sys: TestSystem;
let receiver: Receiver;
let browser: Browser;
let appId: string;

beforeAll(async () => {
  [sys, receiver, browser] = await Promise.all([startSystem(), startReceiver(), launchBrowser()]);
  receiver.on("/bad", { status: 500, body: "down for maintenance" });
  const app = await sys.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme Inc." } });
  expect(app.status).toBe(201);
  appId = app.body.id;
  const type = await sys.request("POST", "/v3/event-types", { json: { name: "invoice.paid" } });
  expect(type.status).toBe(201);
  // One endpoint answers 200; the other 500, tried 4 times (RETRY_SCHEDULE 1s,1s,1s).
  for (const [path, description] of [
    ["/ok", "Billing webhook"],
    ["/bad", "Flaky webhook"],
  ] as const) {
    const res = await sys.request("POST", "/v3/endpoints", {
      json: { app: appId, url: `${receiver.url}${path}`, description },
    });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.close();
});

/** The totals in the chart's accessible table of numbers. */
async function chartTotals(page: Page): Promise<{ succeeded: number; failed: number }> {
  const rows = page.getByRole("table", { name: "Attempts per minute" }).locator("tbody tr");
  const cells = await rows.evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 2).map((td) => Number(td.textContent))),
  );
  return {
    succeeded: cells.reduce((n, [s]) => n + (s ?? 0), 0),
    failed: cells.reduce((n, [, f]) => n + (f ?? 0), 0),
  };
}

async function sendEvents(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await sys.request("POST", "/v3/events", {
      json: { app: appId, type: "invoice.paid", data: { invoice_id: `inv_${i}`, amount: 100 + i } },
    });
    expect(res.status).toBe(201);
  }
}

describe("the dashboard's activity views", () => {
  it("charts deliveries as they happen, lists the failing endpoint first, and filters activity", async () => {
    const { watched, page, sections } = await signIn(browser, sys.url, sys.key);
    await page.getByText("No attempts in the last hour").waitFor();
    await sendEvents(3);

    // The overview polls: the chart fills in without a reload, and grows with more events.
    await expect.poll(() => chartTotals(page), REFRESHED).toEqual({ succeeded: 3, failed: 12 });
    await sendEvents(2);
    await expect.poll(() => chartTotals(page), REFRESHED).toMatchObject({ succeeded: 5 });
    const bars = page.getByRole("img", { name: /^Attempts per minute over the last hour: 5 succeeded/ });
    await bars.waitFor();
    // Failed bars are told apart by a pattern, not by colour alone.
    const failedFill = await bars.locator("rect.chart-bar-fail").first().getAttribute("fill");
    expect(failedFill).toMatch(/^url\(#failed-hatch-[\w-]+\)$/);
    await bars.locator(`pattern${failedFill?.slice(4, -1)}`).waitFor({ state: "attached" });
    await page
      .getByRole("img", { name: /^Attempt latency over the last hour: in the latest minute/ })
      .waitFor();

    const health = page.getByRole("table", { name: "Endpoints, failing first" });
    const firstRow = health.locator("tbody tr").first();
    await firstRow.getByRole("link", { name: "Flaky webhook" }).waitFor();
    await firstRow.getByText("failing").waitFor();
    await expect
      .poll(() => health.locator("tbody tr").nth(1).textContent(), REFRESHED)
      .toMatch(/Billing webhook.*healthy/);
    await expectAccessible(page);
    await watched.screenshot("dashboard-overview");
    await firstRow.getByRole("link", { name: "Flaky webhook" }).click();
    await page.waitForURL(new RegExp(`/dashboard/apps/${appId}/endpoints/ep_`));
    await page.getByRole("navigation", { name: "App sections" }).waitFor();

    // Events and attempts across apps, filtered through the address, each opening in its app.
    await sections.getByRole("link", { name: "Events" }).click();
    await page.getByRole("heading", { name: "Events", level: 1 }).waitFor();
    await page.getByLabel("App", { exact: true }).selectOption(appId);
    await page.waitForURL(/[?&]app=app_/);
    await expect.poll(() => page.getByRole("link", { name: "invoice.paid" }).count(), REFRESHED).toBe(5);
    await watched.screenshot("dashboard-events");
    await page.getByRole("link", { name: "invoice.paid" }).first().click();
    await page.waitForURL(new RegExp(`/dashboard/apps/${appId}/events/evt_`));
    await sections.getByRole("link", { name: "Attempts" }).click();
    await page.getByLabel("Status").selectOption("failed");
    await page.waitForURL(/[?&]status=failed/);
    // 5 events × 4 tries to the failing endpoint, and nothing else: the API counts 20 (one
    // page's worth), and the page shows those 20 with no older page.
    await expect
      .poll(async () => {
        const res = await sys.request("GET", `/v3/attempts?app=${appId}&status=failed&limit=100`);
        return res.body.data.length;
      }, REFRESHED)
      .toBe(20);
    await expect
      .poll(() => page.locator("tbody [data-status]").allTextContents(), REFRESHED)
      .toEqual(Array(20).fill(expect.stringContaining("failed")));
    expect(await page.getByRole("navigation", { name: "Attempts pages" }).count()).toBe(0);
    await expectAccessible(page);
    await watched.screenshot("dashboard-attempts");

    // At a phone's width, nothing runs off the side.
    await sections.getByRole("link", { name: "Overview" }).click();
    await page.setViewportSize({ width: 375, height: 800 });
    await bars.waitFor();
    await watched.screenshot("dashboard-overview-phone");
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    watched.expectClean();
    await watched.close();
  }, 90_000);
});
