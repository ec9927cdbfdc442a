import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { checkView, portalLink } from "../support/portal.ts";

// Managing an endpoint in the portal, in Chromium: its secret, its state, its custom headers,
// deleting it; and the views at a phone's width. The gateway alone (nothing is delivered).
let gw: TestGateway;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let endpointId = "";
const URL_ = "https://example.com/hook";

const region = (name: string): Locator => page.getByRole("region", { name });
/** Whether the element is the one with keyboard focus. */
const focused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);

beforeAll(async () => {
  gw = await startGateway();
  browser = await launchBrowser();
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  await gw.request("POST", "/v3/event-types", { json: { name: "order.created", description: "An order." } });
  const endpoint = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: URL_, description: "Order sync" },
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  endpointId = endpoint.body.id;
  const event = await gw.request("POST", "/v3/events", {
    json: { app: "acme", type: "order.created", data: { id: "ord_1" } },
  });
  expect(event.status, JSON.stringify(event.body)).toBe(201);
  watched = await openPage(browser);
  page = watched.page;
  await page.goto(await portalLink(gw, "acme"));
  await page.getByRole("link", { name: URL_ }).waitFor();
});
afterEach(() => watched.expectClean());
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("managing an endpoint in the portal", () => {
  it("reveals and rotates the signing secret, announcing it without reading it aloud", async () => {
    await page.goto(`${gw.url}/portal/endpoints/${endpointId}`);
    const secret = region("Signing secret");
    expect(await secret.getByText(/^whsec_/).count()).toBe(0);
    await secret.getByRole("button", { name: "Reveal secret" }).click();
    const first = await secret.getByText(/^whsec_/).textContent();
    expect(first).toBe((await gw.request("GET", `/v3/endpoints/${endpointId}/secret`)).body.secret);
    const live = secret.locator("[aria-live]");
    expect(await live.count()).toBe(1);
    expect(await live.textContent()).toBe("Secret shown.");
    await secret.getByRole("button", { name: "Rotate secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate the signing secret?" });
    await dialog.getByText(/24 hours/).waitFor();
    await dialog.getByRole("button", { name: "Rotate secret" }).click();
    await secret.getByText(/previous secret keeps signing/).waitFor();
    expect(await secret.getByText(/^whsec_/).textContent()).not.toBe(first);
    expect(await live.textContent()).not.toMatch(/whsec_/);
  });

  it("disables and enables it, and deletes another after a warning", async () => {
    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect((await gw.request("GET", `/v3/endpoints/${endpointId}`)).body.disabled).toBe(true);
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    expect((await gw.request("GET", `/v3/endpoints/${endpointId}`)).body.disabled).toBe(false);
    await checkView(watched, "portal-endpoint-detail");

    const spare = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://example.com/spare" },
    });
    await page.goto(`${gw.url}/portal/endpoints/${spare.body.id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete this endpoint?" });
    await confirm.getByText(/Pending retries are dropped/).waitFor();
    await confirm.getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByRole("link", { name: URL_ }).waitFor();
    expect(await page.getByRole("link", { name: "https://example.com/spare" }).count()).toBe(0);
  });

  it("keeps keyboard focus on the header rows, and says why a form with a bad row is not sent", async () => {
    await page.goto(`${gw.url}/portal/endpoints/${endpointId}/edit`);
    const add = page.getByRole("button", { name: "Add header" });
    await add.click();
    expect(await focused(page.getByLabel("Header 1 name"))).toBe(true);
    await page.keyboard.type("X-One");
    await add.click();
    expect(await focused(page.getByLabel("Header 2 name"))).toBe(true);
    await page.getByLabel("Header 2 value").fill("a value without a name");

    await page.getByRole("button", { name: "Save changes" }).click();
    await page
      .getByRole("alert")
      .getByText(/Not saved: a custom header needs fixing/)
      .waitFor();
    expect(await focused(page.getByLabel("Header 2 name"))).toBe(true);
    expect((await gw.request("GET", `/v3/endpoints/${endpointId}`)).body.headers).toEqual({});

    // Removing a row hands focus to the next row left, then to "Add header" when none is.
    await page.getByRole("button", { name: /^Remove header 1/ }).click();
    expect(await focused(page.getByLabel("Header 1 name"))).toBe(true);
    expect(await page.getByRole("alert").filter({ hasText: "Not saved" }).count()).toBe(1);
    await page.getByRole("button", { name: /^Remove header 1/ }).click();
    expect(await focused(add)).toBe(true);
    expect(await page.getByText(/Not saved/).count()).toBe(0);
  });

  it("says an address that is not a view is not found, even a malformed one", async () => {
    await page.goto(`${gw.url}/portal/nowhere`);
    await page.getByText("There is nothing at this address.").waitFor();
    // Within the page (as Back to such an entry would): an id that is not valid percent-encoding.
    await page.goto(`${gw.url}/portal/events`);
    await page.getByRole("heading", { level: 1, name: "Events" }).waitFor();
    await page.evaluate(
      'history.pushState(null, "", "/portal/events/%E0%A4%A"); dispatchEvent(new PopStateEvent("popstate"))',
    );
    await page.getByText("There is nothing at this address.").waitFor();
  });

  it("fits a phone's width", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const [path, name, link] of [
      ["", "portal-endpoints-phone", URL_],
      ["/events", "portal-events-phone", "order.created"],
    ] as const) {
      await page.goto(`${gw.url}/portal${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      await page.getByRole("link", { name: link }).first().waitFor();
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
      await checkView(watched, name);
    }
  });
});
