import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { checkView, portalLink } from "../support/portal.ts";

/**
 * An endpoint's filter in the portal, in Chromium: typed as JSON in the endpoint form, tried on
 * a type's example payload as it is typed (the same matching the dispatcher runs), refused at
 * the field when it is not JSON or not a filter, shown in the endpoint's detail, and removed by
 * emptying the box. The gateway alone: nothing is delivered.
 */
let gw: TestGateway;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let endpointId = "";
const URL_ = "https://example.com/big-orders";

/** Its example payload, made from the schema: `{ amount: 250, currency: "EUR", items: [{ sku: "sku_1" }] }`. */
const ORDER_SCHEMA = {
  type: "object",
  required: ["amount", "currency"],
  properties: {
    amount: { type: "number", examples: [250] },
    currency: { type: "string", default: "EUR" },
    items: {
      type: "array",
      items: { type: "object", properties: { sku: { type: "string", examples: ["sku_1"] } } },
    },
  },
};

const FILTER = { "data.amount": { $gte: 100 }, "data.currency": { $in: ["EUR", "USD"] } };

const form = (name: string) => page.getByRole("form", { name });
const preview = (within: Locator) => within.getByRole("group", { name: "Preview" });
const focused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);
const endpoints = async () =>
  (await gw.request("GET", "/v3/endpoints?app=acme")).body.data as { id: string; url: string }[];

beforeAll(async () => {
  [gw, browser] = await Promise.all([startGateway(), launchBrowser()]);
  expect((await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).status).toBe(201);
  const types = [
    { name: "order.created", description: "An order was placed.", schema: ORDER_SCHEMA },
    { name: "note.added", description: "A note, without a schema." },
  ];
  for (const json of types) {
    const res = await gw.request("POST", "/v3/event-types", { json });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const order = await gw.request("GET", "/v3/event-types/order.created");
  expect(order.body.example).toEqual({ amount: 250, currency: "EUR", items: [{ sku: "sku_1" }] });
  watched = await openPage(browser);
  page = watched.page;
  page.setDefaultTimeout(15_000);
  await page.goto(await portalLink(gw, "acme"));
  await page.getByRole("heading", { level: 1 }).first().waitFor();
});
afterEach(() => watched?.expectClean());
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("an endpoint's filter in the portal", () => {
  it("tries the filter on a type's example as it is typed, refuses a bad one at the field, and saves it", async () => {
    await page.goto(`${gw.url}/portal/endpoints/new`);
    const f = form("Add an endpoint");
    await f.getByLabel("URL").fill(URL_);
    const box = f.getByLabel("Filter", { exact: true });
    const tried = preview(f);
    const status = tried.getByRole("status");
    const select = tried.getByLabel("Event type to try");

    // No type checked: any of the app's types can be tried; one without a schema has no example.
    expect(await select.locator("option").allTextContents()).toEqual(["note.added", "order.created"]);
    await status.getByText(/note\.added has no example payload \(its type has no schema\)/).waitFor();
    await select.selectOption("order.created");
    await status
      .getByText(/^No filter: this endpoint would receive the example order\.created event\.$/)
      .waitFor();

    // Checking a type narrows the choice to the types checked.
    await f.getByRole("checkbox", { name: /order\.created/ }).check();
    expect(await select.locator("option").allTextContents()).toEqual(["order.created"]);
    await box.fill(JSON.stringify({ "data.amount": { $gte: 1000 } }));
    await status
      .getByText(/would not receive the example order\.created event: the filter does not match/)
      .waitFor();
    await box.fill(JSON.stringify({ "data.amount": { $gte: 100 }, "data.items.sku": "sku_1" }));
    await status.getByText(/^This endpoint would receive the example order\.created event\.$/).waitFor();
    await tried.getByText("The event tried").click();
    expect(await tried.locator("pre").textContent()).toContain('"amount": 250');

    // Not a filter: said live, with the part at fault, and refused by the API at the field.
    await box.fill(JSON.stringify({ "data.amount": { $gte: true } }));
    await status
      .getByText('Not a valid filter: $gte compares with a number or a string. (filter["data.amount"].$gte)')
      .waitFor();
    expect(await box.getAttribute("aria-invalid")).toBe("true");
    await f.getByRole("button", { name: "Create endpoint" }).click();
    const fieldError = f.locator(".filter-field .field-error").first();
    await fieldError
      .getByText('$gte compares with a number or a string. (filter["data.amount"].$gte)')
      .waitFor();
    // Focus follows the API's answer in an effect after the render that shows the error.
    await expect.poll(() => focused(box)).toBe(true);
    // The error is tied to the box, so a screen reader reads it with the field.
    const described = (await box.getAttribute("aria-describedby"))!.split(" ");
    expect(await fieldError.getAttribute("id")).toBe(described[1]);
    watched.expectOnly([/status of 400/]);
    expect(await endpoints()).toEqual([]);
    await checkView(watched, "portal-endpoint-filter-invalid");

    // Not JSON: told at the field before anything is sent.
    await box.fill('{"data.amount": {"$gte": 100}');
    await status.getByText(/^Not JSON yet:/).waitFor();
    await f.getByRole("button", { name: "Create endpoint" }).click();
    await f.getByText(/^Not saved: the filter is not JSON\./).waitFor();
    expect(await focused(box)).toBe(true);
    expect(await endpoints()).toEqual([]);
    await checkView(watched, "portal-endpoint-filter-not-json");

    await box.fill(JSON.stringify(FILTER));
    await status.getByText(/^This endpoint would receive the example order\.created event\.$/).waitFor();
    expect(await f.getByText(/^Not saved/).count()).toBe(0);
    expect(await box.getAttribute("aria-invalid")).toBeNull();
    await checkView(watched, "portal-endpoint-filter-form");
    await f.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/portal\/endpoints\/ep_[^/]+$/);

    const [created] = await endpoints();
    endpointId = created!.id;
    const saved = (await gw.request("GET", `/v3/endpoints/${endpointId}`)).body;
    expect(saved).toMatchObject({ url: URL_, event_types: ["order.created"], filter: FILTER });
    // The server's dry run agrees with the preview on the example.
    const dry = await gw.request("POST", "/v3/events/dry-run", {
      json: { app: "acme", type: "order.created", data: { amount: 250, currency: "EUR" } },
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.endpoints).toEqual([expect.objectContaining({ endpoint: endpointId, receives: true })]);

    // The detail shows the filter, pretty-printed.
    const props = page.getByRole("region", { name: "Properties" });
    const shown = props.getByRole("figure", { name: "The endpoint's filter" }).locator("pre");
    expect(await shown.textContent()).toBe(JSON.stringify(FILTER, null, 2));
    await checkView(watched, "portal-endpoint-filter-detail");
  });

  it("edits the filter, and removes it by emptying the box", async () => {
    await page.goto(`${gw.url}/portal/endpoints/${endpointId}/edit`);
    const f = form("Edit endpoint");
    const box = f.getByLabel("Filter", { exact: true });
    const status = preview(f).getByRole("status");
    await status.getByText(/^This endpoint would receive the example order\.created event\.$/).waitFor();
    expect(await box.inputValue()).toBe(JSON.stringify(FILTER, null, 2));

    await box.fill(JSON.stringify({ "data.currency": "USD" }));
    await status.getByText(/would not receive the example order\.created event/).waitFor();
    await f.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${endpointId}$`));
    await page.getByRole("figure", { name: "The endpoint's filter" }).getByText(/"USD"/).waitFor();
    expect((await gw.request("GET", `/v3/endpoints/${endpointId}`)).body.filter).toEqual({
      "data.currency": "USD",
    });

    // The list says which endpoints filter.
    await page.goto(`${gw.url}/portal`);
    await page.getByText("Receives order.created, only those its filter matches").waitFor();

    await page.goto(`${gw.url}/portal/endpoints/${endpointId}/edit`);
    await box.fill("");
    await status
      .getByText(/^No filter: this endpoint would receive the example order\.created event\.$/)
      .waitFor();
    await f.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${endpointId}$`));
    const props = page.getByRole("region", { name: "Properties" });
    await props.getByText("None: every event of its types").waitFor();
    expect(await props.getByRole("figure", { name: "The endpoint's filter" }).count()).toBe(0);
    const after = (await gw.request("GET", `/v3/endpoints/${endpointId}`)).body;
    expect(after).toMatchObject({ filter: null, event_types: ["order.created"], url: URL_ });
  });
});
