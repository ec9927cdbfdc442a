import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

// What a portal session may see and do, in Chromium: the gateway alone (nothing is delivered).
let gw: TestGateway;
let browser: Browser;
let endpointUrl = "";
let eventId = "";

async function portalLink(app: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await gw.request("POST", `/v3/apps/${app}/portal-sessions`, { json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return `${gw.url}/portal#token=${res.body.token}`;
}

beforeAll(async () => {
  gw = await startGateway();
  browser = await launchBrowser();
  for (const uid of ["acme", "other"]) await gw.request("POST", "/v3/apps", { json: { uid, name: uid } });
  await gw.request("POST", "/v3/event-types", { json: { name: "order.note", description: "Free text." } });
  const endpoint = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: "https://example.com/hook", description: "Order sync" },
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  endpointUrl = endpoint.body.url;
  const note = '<script>alert("x")</script><img src=x onerror=alert(1)>';
  const event = await gw.request("POST", "/v3/events", {
    json: { app: "acme", type: "order.note", data: { note } },
  });
  expect(event.status, JSON.stringify(event.body)).toBe(201);
  eventId = event.body.id;
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("portal sessions in the browser", () => {
  it("renders a payload holding markup as text, executing nothing", async () => {
    const watched = await openPage(browser);
    await watched.page.goto(await portalLink("acme"));
    await watched.page
      .getByRole("navigation", { name: "Sections" })
      .getByRole("link", { name: "Events" })
      .click();
    await watched.page.getByRole("link", { name: "order.note" }).click();
    await watched.page.getByRole("figure", { name: "Event payload" }).getByText("onerror=alert(1)").waitFor();
    expect(await watched.page.locator("main img, main script").count()).toBe(0);
    watched.expectClean(); // a dialog (an alert that ran) would be a problem
    await watched.close();
  });

  it("a read-only session sees the endpoint but no way to change it", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(await portalLink("acme", { read_only: true }));
    expect(await page.getByRole("link", { name: "Add endpoint" }).count()).toBe(0);
    await page.getByRole("link", { name: endpointUrl }).click();
    await page.getByRole("heading", { name: "Recent attempts" }).waitFor();
    // Nor the signing secret: a read-only link's holder could forge webhooks with it.
    expect(await page.getByRole("region", { name: "Signing secret" }).count()).toBe(0);
    for (const name of ["Reveal secret", "Delete", "Disable", "Rotate secret", "Send test event", "Replay"])
      expect(await page.getByRole("button", { name, exact: true }).count(), name).toBe(0);
    expect(await page.getByRole("link", { name: "Edit" }).count()).toBe(0);
    watched.expectClean();
    await watched.close();
  });

  it("another app's session sees nothing of this one", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(await portalLink("other"));
    await page.getByText("No endpoints yet").waitFor();
    await page.goto(`${gw.url}/portal/events/${eventId}`);
    await page
      .getByRole("alert")
      .getByText(/No such event/)
      .waitFor();
    await page.goto(`${gw.url}/portal/events`);
    await page.getByText("No events yet").waitFor();
    // The 404 asked for on purpose above, and no other (a missing asset would be one too).
    watched.expectClean([new RegExp(`status of 404\\b.*/v3/events/${eventId}\\)$`)]);
    await watched.close();
  });
});
