import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { portalLink } from "../support/portal.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// Customer data holding markup, everywhere the portal shows customer data: an event type's
// description and schema, an endpoint's description and custom header, an event's payload and
// a receiver's response. Each shows as the text it is; nothing becomes an element, nothing runs
// (a dialog from an alert would be one of the page's problems).
const IMG = "<img src=x onerror=alert(1)>";
const SCRIPT = "<script>alert(2)</script>";
const MARKUP = `${IMG}${SCRIPT}`;

let sys: TestSystem;
let receiver: Receiver;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let endpointId = "";
let eventId = "";
let attemptId = "";

/** Both pieces of markup show as text in `scope`, and `main` holds no image or script element. */
async function showsLiterally(scope: Locator): Promise<void> {
  await scope.getByText(IMG, { exact: false }).first().waitFor();
  await scope.getByText(SCRIPT, { exact: false }).first().waitFor();
  expect(await page.locator("main img, main script").count()).toBe(0);
}

/** The event's first attempt, once it succeeded (within 20 s). */
async function succeededAttempt(event: string): Promise<string> {
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    const attempt = (await sys.request("GET", `/v3/attempts?event=${event}`)).body.data?.[0];
    if (attempt?.status === "succeeded") return attempt.id;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`No succeeded attempt for ${event}`);
}

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  receiver.on("/xss", { status: 200, headers: { "content-type": "text/html" }, body: MARKUP });
  browser = await launchBrowser();
  await sys.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  const type = await sys.request("POST", "/v3/event-types", {
    json: {
      name: "note.posted",
      description: MARKUP,
      schema: { type: "object", properties: { note: { type: "string", description: MARKUP } } },
    },
  });
  expect(type.status, JSON.stringify(type.body)).toBe(201);
  const endpoint = await sys.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: `${receiver.url}/xss`, description: MARKUP, headers: { "X-Note": MARKUP } },
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  endpointId = endpoint.body.id;
  const event = await sys.request("POST", "/v3/events", {
    json: { app: "acme", type: "note.posted", data: { note: MARKUP } },
  });
  expect(event.status, JSON.stringify(event.body)).toBe(201);
  eventId = event.body.id;
  attemptId = await succeededAttempt(eventId);
  expect(receiver.received("/xss")[0]?.headers["x-note"]).toBe(MARKUP);

  watched = await openPage(browser);
  page = watched.page;
  await page.goto(await portalLink(sys, "acme"));
});
afterEach(() => watched.expectClean());
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.close();
});

describe("customer data holding markup, in the portal", () => {
  it("the endpoints list shows the endpoint's description as text", async () => {
    await showsLiterally(page.getByRole("list", { name: "Endpoints" }));
  });

  it("the catalog shows the type's description and its schema's as text", async () => {
    await page.goto(`${sys.url}/portal/catalog`);
    const item = page.getByRole("article", { name: "note.posted" });
    await showsLiterally(item.locator(".catalog-name"));
    await showsLiterally(item.getByRole("list", { name: "Fields of note.posted" }));
    await item.getByRole("button", { name: "JSON" }).click();
    await showsLiterally(item.getByRole("figure", { name: "JSON schema of note.posted" }));
  });

  it("the endpoint shows its description as text, and its custom header by name only", async () => {
    await page.goto(`${sys.url}/portal/endpoints/${endpointId}`);
    const props = page.getByRole("region", { name: "Properties" });
    await showsLiterally(props.getByRole("definition").filter({ hasText: "onerror" }).first());
    // Header values are write-only: the markup the receiver got is not on the page at all.
    await props.getByRole("listitem").filter({ hasText: "X-Note" }).getByText("[redacted]").waitFor();
    expect(await props.getByRole("listitem").filter({ hasText: "X-Note" }).textContent()).not.toContain(
      "onerror",
    );
  });

  it("the event shows its payload, and names its endpoint, as text", async () => {
    await page.goto(`${sys.url}/portal/events/${eventId}`);
    await showsLiterally(page.getByRole("figure", { name: "Event payload" }));
    await showsLiterally(page.getByRole("table", { name: "Deliveries of this event" }));
  });

  it("the attempt shows the request body and the response body as text, the header redacted", async () => {
    await page.goto(`${sys.url}/portal/attempts/${attemptId}`);
    const request = page.getByRole("region", { name: "Request" });
    const headers = request.getByRole("table", { name: "Request headers" });
    await headers.getByRole("row", { name: /x-note \[redacted\]/i }).waitFor();
    expect(await headers.textContent()).not.toContain("onerror");
    await showsLiterally(request.getByRole("figure", { name: "Request body" }));
    await showsLiterally(page.getByRole("region", { name: "Response" }).getByRole("figure"));
    await watched.screenshot("portal-attempt-markup");
  });
});
