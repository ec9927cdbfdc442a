import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, describeViolations } from "../support/axe.ts";
import { launchBrowser, openPage } from "../support/browser.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * The dashboard against the whole running system: create an app and an event type with a
 * schema, and watch deliveries move the overview's chart. (Signing in: dashboardSignIn.test.ts.)
 */
let sys: TestSystem;
let receiver: Receiver;
let browser: Browser;

beforeAll(async () => {
  [sys, receiver, browser] = await Promise.all([startSystem(), startReceiver(), launchBrowser()]);
  receiver.on("/bad", { status: 500, body: "down for maintenance" });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.close();
});

const SCHEMA = {
  type: "object",
  required: ["invoice_id", "amount"],
  properties: {
    invoice_id: { type: "string", examples: ["inv_1042"] },
    amount: { type: "integer", minimum: 0 },
  },
};

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

async function expectAccessible(page: Page): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations, describeViolations(violations)).toEqual([]);
}

/** A page signed in through the form with the account's key, on the overview. */
async function signedIn() {
  const watched = await openPage(browser);
  const { page } = watched;
  page.setDefaultTimeout(15_000);
  await page.goto(`${sys.url}/dashboard`);
  await page.getByLabel("API key").fill(sys.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  return { watched, page, sections: page.getByRole("navigation", { name: "Sections", exact: true }) };
}

async function sendEvents(app: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await sys.request("POST", "/v3/events", {
      json: { app, type: "invoice.paid", data: { invoice_id: `inv_${i}`, amount: 100 + i } },
    });
    expect(res.status).toBe(201);
  }
}

// The tests run in order, each building on what the one before made (the app, the event type).
describe("the dashboard", () => {
  let appId: string;

  it("creates an app (its errors at the field), finds it, and makes a portal link in its view", async () => {
    const { watched, page, sections } = await signedIn();
    await page.getByText("No attempts in the last hour").waitFor();
    await sections.getByRole("link", { name: "Apps" }).click();
    await page.getByText("No apps yet").waitFor();
    await page.getByRole("button", { name: "New app" }).click();
    const dialog = page.getByRole("dialog", { name: "New app" });
    await dialog.getByLabel("Name").fill("Acme Inc.");
    await dialog.getByLabel("UID (optional)").fill("app_mine");
    await dialog.getByRole("button", { name: "Create app" }).click();
    await dialog.getByText(/uid must not start with 'app_'/).waitFor();
    expect(await dialog.getByLabel("UID (optional)").getAttribute("aria-invalid")).toBe("true");
    await dialog.getByLabel("UID (optional)").fill("acme");
    await dialog.getByRole("button", { name: "Create app" }).click();
    await page.getByRole("navigation", { name: "App sections" }).waitFor();
    appId = /\/dashboard\/apps\/(app_[^/]+)$/.exec(page.url())?.[1] as string;
    expect(appId).toBeTruthy();
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByText("Acme Inc.").waitFor();

    await sections.getByRole("link", { name: "Apps" }).click();
    const search = page.getByLabel("Search apps");
    await search.fill("acm");
    await page.getByRole("link", { name: "Acme Inc." }).waitFor();
    await search.fill("nothing-like-it");
    await page.getByText("No app matches “nothing-like-it”").waitFor();
    await search.fill("");
    await watched.screenshot("dashboard-apps");

    await page.getByRole("link", { name: "Acme Inc." }).click();
    await page.getByRole("button", { name: "Portal link…" }).click();
    const linkDialog = page.getByRole("dialog", { name: "Portal link for Acme Inc." });
    await linkDialog.getByRole("button", { name: "Create link" }).click();
    expect(await linkDialog.getByLabel("Portal link").inputValue()).toMatch(/\/portal#token=/);
    await watched.screenshot("dashboard-portal-link");
    await linkDialog.getByRole("button", { name: "Close" }).click();
    await page.getByRole("button", { name: "Revoke portal links" }).click();
    await page
      .getByRole("dialog", { name: "Revoke every portal link?" })
      .getByRole("button", { name: "Revoke all" })
      .click();
    await page.getByText("1 portal session was revoked.").waitFor();
    await expectAccessible(page);
    await watched.screenshot("dashboard-app");
    watched.expectClean([/status of 400/]); // the bad uid, on purpose
    await watched.close();
  });

  it("creates an event type through the schema editor, which checks the schema as it is typed", async () => {
    const { watched, page, sections } = await signedIn();
    await sections.getByRole("link", { name: "Event types" }).click();
    await page.getByText("No event types yet").waitFor();
    await page.getByRole("link", { name: "New event type" }).click();
    await page.getByLabel("Name").fill("invoice.paid");
    await page.getByLabel("Description").fill("An invoice was paid.");
    const schema = page.getByLabel("Schema (JSON Schema)");
    await schema.fill('{ "type": "object",\n  "properties": }');
    await page.getByText(/^Line 2, column 17: Unexpected token/).waitFor();
    await schema.fill('{ "type": "objekt" }');
    await page.getByText("Not a valid JSON Schema:").waitFor();
    await page.getByText(/\/type must be/).waitFor();
    expect(await schema.getAttribute("aria-invalid")).toBe("true");
    await watched.screenshot("dashboard-schema-invalid");
    await schema.fill(JSON.stringify(SCHEMA, null, 2));
    await page.getByText("Valid JSON Schema.").waitFor();
    const example = page.getByRole("figure", { name: "An example payload made from the schema" });
    await example.getByText(/"invoice_id": "inv_1042"/).waitFor();
    await expectAccessible(page);
    await watched.screenshot("dashboard-event-type-editor");
    await page.getByRole("button", { name: "Create event type" }).click();
    await page.getByRole("heading", { name: "invoice.paid", level: 1 }).waitFor();
    const created = await sys.request("GET", "/v3/event-types/invoice.paid");
    expect(created.body.schema).toEqual(SCHEMA);

    // Edit the description, archive (it leaves the list), and unarchive.
    await page.getByLabel("Description").fill("An invoice was paid in full.");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    expect((await sys.request("GET", "/v3/event-types/invoice.paid")).body.description).toBe(
      "An invoice was paid in full.",
    );
    await page.getByRole("button", { name: "Archive" }).click();
    await page.getByText("Archived: it accepts no new events.").waitFor();
    await page
      .getByRole("navigation", { name: "Breadcrumb" })
      .getByRole("link", { name: "Event types" })
      .click();
    await page.getByText("No event types yet").waitFor();
    await page.getByLabel("Show archived types").check();
    await page.getByRole("link", { name: "invoice.paid" }).click();
    await page.getByRole("button", { name: "Unarchive" }).click();
    await page.getByText("Unarchived: it accepts events again.").waitFor();
    expect((await sys.request("GET", "/v3/event-types/invoice.paid")).body.archived).toBe(false);
    watched.expectClean();
    await watched.close();
  });

  it("charts deliveries as they happen, lists the failing endpoint first, and filters activity", async () => {
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
    const { watched, page, sections } = await signedIn();
    await page.getByText("No attempts in the last hour").waitFor();
    await sendEvents(appId, 3);

    // The overview polls: the chart fills in without a reload, and grows with more events.
    await expect.poll(() => chartTotals(page), { timeout: 20_000 }).toEqual({ succeeded: 3, failed: 12 });
    await sendEvents(appId, 2);
    await expect.poll(() => chartTotals(page), { timeout: 20_000 }).toMatchObject({ succeeded: 5 });
    const bars = page.getByRole("img", { name: /^Attempts per minute over the last hour: 5 succeeded/ });
    await bars.waitFor();
    await page
      .getByRole("img", { name: /^Attempt latency over the last hour: in the latest minute/ })
      .waitFor();

    const health = page.getByRole("table", { name: "Endpoints, failing first" });
    const firstRow = health.locator("tbody tr").first();
    await firstRow.getByRole("link", { name: "Flaky webhook" }).waitFor();
    await firstRow.getByText("failing").waitFor();
    await expect
      .poll(() => health.locator("tbody tr").nth(1).textContent())
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
    await expect.poll(() => page.getByRole("link", { name: "invoice.paid" }).count()).toBe(5);
    await watched.screenshot("dashboard-events");
    await page.getByRole("link", { name: "invoice.paid" }).first().click();
    await page.waitForURL(new RegExp(`/dashboard/apps/${appId}/events/evt_`));
    await sections.getByRole("link", { name: "Attempts" }).click();
    await page.getByLabel("Status").selectOption("failed");
    await page.waitForURL(/[?&]status=failed/);
    // 5 events × 4 tries to the failing endpoint, and nothing else.
    await expect
      .poll(() => page.locator("tbody [data-status]").allTextContents())
      .toEqual(Array(20).fill(expect.stringContaining("failed")));
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
