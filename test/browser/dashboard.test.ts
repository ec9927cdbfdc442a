import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.ts";
import { expectAccessible, signedIn as signIn } from "../support/dashboard.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * The dashboard against the running system: create an app, find it, and give its customer a
 * portal link; create an event type with a schema. (Signing in: dashboardSignIn.test.ts;
 * deliveries on the overview and across apps: dashboardActivity.test.ts.)
 */
let sys: TestSystem;
let browser: Browser;

beforeAll(async () => {
  [sys, browser] = await Promise.all([startSystem(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
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

const signedIn = () => signIn(browser, sys.url, sys.key);

describe("the dashboard", () => {
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
    // The bad uid's 400, on purpose: that one, and nothing else, so far.
    await expect.poll(() => [...watched.problems]).toEqual([expect.stringMatching(/status of 400/)]);
    watched.problems.splice(0);
    await dialog.getByLabel("UID (optional)").fill("acme");
    await dialog.getByRole("button", { name: "Create app" }).click();
    await page.getByRole("navigation", { name: "App sections" }).waitFor();
    expect(page.url()).toMatch(/\/dashboard\/apps\/app_[^/]+$/);
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByText("Acme Inc.").waitFor();

    // Another app, which searching for "acm" leaves out.
    expect((await sys.request("POST", "/v3/apps", { json: { name: "Globex" } })).status).toBe(201);
    await sections.getByRole("link", { name: "Apps" }).click();
    const globex = page.getByRole("link", { name: "Globex" });
    await globex.waitFor();
    const search = page.getByLabel("Search apps");
    await search.fill("acm");
    await globex.waitFor({ state: "detached" });
    await page.getByRole("link", { name: "Acme Inc." }).waitFor();
    await search.fill("nothing-like-it");
    await page.getByText("No app matches “nothing-like-it”").waitFor();
    await search.fill("");
    await globex.waitFor();
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
    watched.expectClean();
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
});
