import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, describeViolations } from "../support/axe.ts";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// The portal journey of issue 6 in Chromium, against the whole system. RETRY_SCHEDULE "1s,1s,1s":
// a delivery to a failing receiver is `retrying` for about 3 s, then `failed`.
let sys: TestSystem;
let receiver: Receiver;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let endpointId = "";
let failedEvent = "";

const ORDER_SCHEMA = {
  type: "object",
  required: ["id", "total"],
  properties: {
    id: { type: "string", description: "The order's id." },
    total: { type: "integer", minimum: 0, description: "In cents." },
    currency: { enum: ["EUR", "USD"] },
    items: {
      type: "array",
      items: {
        type: "object",
        required: ["sku"],
        properties: { sku: { type: "string" }, qty: { type: "integer" } },
      },
    },
  },
};

async function portalLink(app: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await sys.request("POST", `/v3/apps/${app}/portal-sessions`, { json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return `${sys.url}/portal#token=${res.body.token}`;
}

/** Marks the document, so a later check proves the page changed without a reload. */
const mark = () => page.evaluate(() => Object.assign(globalThis, { portalMark: true }));
const stillMarked = () => page.evaluate(() => "portalMark" in globalThis);
const nav = (name: string) => page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name });
const region = (name: string): Locator => page.getByRole("region", { name });

/** A screenshot kept as an artifact, and the view checked against WCAG 2.1 A/AA rules. */
async function view(name: string): Promise<void> {
  await watched.screenshot(name);
  const violations = await axeViolations(page);
  expect(violations, `${name}:\n${describeViolations(violations)}`).toEqual([]);
}

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  browser = await launchBrowser();
  await sys.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  const made = await sys.request("POST", "/v3/event-types", {
    json: { name: "order.created", description: "An order was placed.", schema: ORDER_SCHEMA },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await sys.request("POST", "/v3/event-types", { json: { name: "order.note", description: "Free text." } });
  watched = await openPage(browser);
  page = watched.page;
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.close();
});

describe("the portal journey", () => {
  it("creates an endpoint through the form, with the API's errors at their field", async () => {
    await page.goto(await portalLink("acme"));
    await page.getByText("No endpoints yet").waitFor();
    await page.getByRole("link", { name: "Add endpoint" }).first().click();
    await page.getByLabel("URL", { exact: true }).fill("ftp://example.com/hook");
    await page.getByRole("button", { name: "Create endpoint" }).click();
    await page
      .getByText(/url must use http or https/)
      .first()
      .waitFor();
    expect(await page.getByLabel("URL", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    await view("portal-endpoint-form");

    await page.getByLabel("URL", { exact: true }).fill(`${receiver.url}/hook`);
    await page.getByLabel("Description").fill("Order sync");
    await page.getByLabel("order.created").check();
    await page.getByRole("button", { name: "Add header" }).click();
    await page.getByLabel("Header 1 name").fill("X-Shop");
    await page.getByLabel("Header 1 value").fill("acme");
    await page.getByRole("button", { name: "Create endpoint" }).click();
    await page.getByRole("heading", { level: 1, name: `${receiver.url}/hook` }).waitFor();
    endpointId = new URL(page.url()).pathname.split("/").pop()!;
    const res = await sys.request("GET", `/v3/endpoints/${endpointId}`);
    expect(res.body).toMatchObject({ event_types: ["order.created"], headers: { "X-Shop": "acme" } });
    await nav("Endpoints").click();
    await page.getByRole("link", { name: `${receiver.url}/hook` }).waitFor();
    await page.getByText("No attempts in the last 24 h").waitFor();
    await view("portal-endpoints");
  });

  it("shows each event type's schema beside its name, as fields and as JSON, with an example", async () => {
    await nav("Event catalog").click();
    const item = page.getByRole("article", { name: "order.created" });
    const fields = item.getByRole("list", { name: "Fields of order.created" });
    await fields.waitFor();
    for (const text of ["total", "integer", "required", "array of object", "sku", '"EUR"', "In cents."])
      await fields.getByText(text, { exact: false }).first().waitFor();
    const name = (await item.getByRole("heading", { name: "order.created" }).boundingBox())!;
    const schema = (await fields.boundingBox())!;
    expect(schema.x).toBeGreaterThan(name.x + name.width);
    expect(schema.y).toBeLessThan(name.y + 200);
    await item
      .getByRole("figure", { name: "Example payload of order.created" })
      .getByText('"total"')
      .waitFor();
    await view("portal-catalog");
    await item.getByRole("button", { name: "JSON" }).click();
    await item
      .getByRole("figure", { name: "JSON schema of order.created" })
      .getByText('"minimum": 0')
      .waitFor();
    await page.getByRole("article", { name: "order.note" }).getByText("No schema").waitFor();
  });

  it("sends a test event from the endpoint and watches its delivery succeed without a reload", async () => {
    await nav("Endpoints").click();
    await page.getByRole("link", { name: `${receiver.url}/hook` }).click();
    await mark();
    await region("Send a test event").getByRole("button", { name: "Send test event" }).click();
    await region("Send a test event").getByText("succeeded").waitFor();
    expect(receiver.received("/hook")[0]?.headers["x-shop"]).toBe("acme");
    await region("Send a test event").getByRole("link", { name: /^evt_/ }).click();
    await page
      .getByRole("table", { name: "Deliveries of this event" })
      .getByRole("row", { name: /Order sync/ })
      .getByText("succeeded")
      .waitFor();
    expect(await stillMarked()).toBe(true);
    await view("portal-event");
  });

  it("watches an event to a failing receiver go retrying, then failed", async () => {
    receiver.on("/hook", { status: 500, body: "boom" });
    await nav("Events").click();
    await mark();
    const sent = await sys.request("POST", "/v3/events", {
      json: { app: "acme", type: "order.created", data: { id: "ord_2", total: 1200, currency: "EUR" } },
    });
    expect(sent.status).toBe(201);
    failedEvent = sent.body.id;
    const row = page.getByRole("row").filter({ hasText: failedEvent });
    await row.getByText("retrying").waitFor();
    await row.getByText("failed").waitFor({ timeout: 20_000 });
    expect(await stillMarked()).toBe(true);

    await page.getByLabel("Delivery status").selectOption("failed");
    await row.waitFor();
    expect(await page.getByRole("row").count()).toBe(2);
    await page.getByLabel("Endpoint", { exact: true }).selectOption(endpointId);
    await page.reload();
    await row.getByText("failed").waitFor();
    expect(await page.getByLabel("Delivery status").inputValue()).toBe("failed");
    expect(new URL(page.url()).searchParams.get("endpoint")).toBe(endpointId);
    await view("portal-events-filtered");
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.getByRole("row").nth(2).waitFor();
    await view("portal-events");
  }, 45_000);

  it("replays the failed delivery from the endpoint and watches it succeed", async () => {
    receiver.on("/hook", { status: 200 });
    await nav("Endpoints").click();
    await page.getByRole("link", { name: `${receiver.url}/hook` }).click();
    const replay = region("Replay failed deliveries");
    await replay.getByLabel("All failed deliveries").check();
    await replay.getByRole("button", { name: "Replay" }).click();
    const progress = replay.getByRole("status");
    await progress.getByText("Queued 1 delivery").waitFor();
    await progress.getByText("completed").waitFor();
    await progress.getByText("1 succeeded").waitFor();
    await view("portal-replay");
    await nav("Events").click();
    await page.getByRole("row").filter({ hasText: failedEvent }).getByText("succeeded").waitFor();
  });

  it("opens an attempt: the request as sent and the response as received", async () => {
    await page
      .getByRole("row")
      .filter({ hasText: failedEvent })
      .getByRole("link", { name: "order.created" })
      .click();
    await page.getByRole("link", { name: /^Attempt 1,/ }).click();
    await page.getByRole("heading", { name: "Attempt 1" }).waitFor();
    const request = region("Request");
    const headers = request.getByRole("table", { name: "Request headers" });
    await headers.getByRole("row", { name: /webhook-signature v1,/ }).waitFor();
    await headers.getByRole("row", { name: /x-shop acme/i }).waitFor();
    await request.getByRole("figure", { name: "Request body" }).getByText("ord_2").waitFor();
    const response = region("Response");
    await response.getByText("Status 500").waitFor();
    await response.getByRole("figure", { name: "Response body" }).getByText("boom").waitFor();
    await page.getByText("http_error").first().waitFor();
    await view("portal-attempt");
  });

  it("reveals and rotates the signing secret, disables and enables, and deletes after a warning", async () => {
    await nav("Endpoints").click();
    await page.getByRole("link", { name: `${receiver.url}/hook` }).click();
    const secret = region("Signing secret");
    expect(await secret.getByText(/^whsec_/).count()).toBe(0);
    await secret.getByRole("button", { name: "Reveal secret" }).click();
    const first = await secret.getByText(/^whsec_/).textContent();
    expect(first).toBe((await sys.request("GET", `/v3/endpoints/${endpointId}/secret`)).body.secret);
    await secret.getByRole("button", { name: "Rotate secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate the signing secret?" });
    await dialog.getByText(/24 hours/).waitFor();
    await dialog.getByRole("button", { name: "Rotate secret" }).click();
    await secret.getByText(/previous secret keeps signing/).waitFor();
    expect(await secret.getByText(/^whsec_/).textContent()).not.toBe(first);

    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect((await sys.request("GET", `/v3/endpoints/${endpointId}`)).body.disabled).toBe(true);
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    expect((await sys.request("GET", `/v3/endpoints/${endpointId}`)).body.disabled).toBe(false);
    await view("portal-endpoint-detail");

    const spare = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `${receiver.url}/spare` },
    });
    await page.goto(`${sys.url}/portal/endpoints/${spare.body.id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete this endpoint?" });
    await confirm.getByText(/Pending retries are dropped/).waitFor();
    await confirm.getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByRole("link", { name: `${receiver.url}/hook` }).waitFor();
    expect(await page.getByRole("link", { name: `${receiver.url}/spare` }).count()).toBe(0);
  });

  it("fits a phone's width", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const [path, name] of [
      ["", "portal-endpoints-phone"],
      ["/events", "portal-events-phone"],
    ] as const) {
      await page.goto(`${sys.url}/portal${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      await page
        .getByRole("link", { name: path ? "order.created" : `${receiver.url}/hook` })
        .first()
        .waitFor();
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
      await view(name);
    }
    // The one error the journey caused on purpose: the 400 for the ftp:// URL.
    watched.expectClean([/status of 400/]);
  });
});
