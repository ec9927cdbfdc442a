import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { checkView, portalLink } from "../support/portal.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Ordered delivery in the portal, in Chromium, against the running system: an endpoint made
 * `fifo` through the form, then its deliveries held behind a failing one, shown on its page
 * with the event they wait behind (a link to it), why, and how many wait.
 */
let sys: TestSystem;
let receiver: Receiver;
let browser: Browser;
let watched: WatchedPage;
let page: Page;

beforeAll(async () => {
  // A long wait before the retry: the hold lasts while the page is looked at.
  [sys, browser] = await Promise.all([startSystem({ RETRY_SCHEDULE: "10m" }), launchBrowser()]);
  receiver = await startReceiver();
  await setupApp(sys, ["ledger.entry"]);
  watched = await openPage(browser);
  page = watched.page;
  page.setDefaultTimeout(20_000);
  await page.goto(await portalLink(sys, "acme"));
  await page.getByRole("heading", { level: 1 }).first().waitFor();
});
afterEach(() => watched?.expectClean());
afterAll(async () => {
  await browser?.close();
  await sys?.close();
  await receiver?.close();
});

describe("ordered delivery in the portal", () => {
  it("makes an endpoint fifo through the form and shows what its deliveries wait behind", async () => {
    receiver.on("/ledger", (r) =>
      JSON.parse(r.body).data.n === 1 ? { status: 500, body: "ledger closed" } : { status: 200 },
    );
    await page.goto(`${sys.url}/portal/endpoints/new`);
    const form = page.getByRole("form", { name: "Add an endpoint" });
    await form.getByLabel("URL").fill(`${receiver.url}/ledger`);
    const order = form.getByRole("group", { name: "Delivery limits and order" }).getByLabel("Order");
    expect(await order.inputValue()).toBe("none");
    await order.selectOption("fifo");
    await form.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/portal\/endpoints\/ep_[^/]+$/);
    const id = page.url().split("/").pop()!;
    expect((await sys.request("GET", `/v3/endpoints/${id}`)).body.ordering).toBe("fifo");
    await page.getByText("In order (FIFO): one delivery at a time").waitFor();

    const f = fixtures(sys, receiver);
    const first = await f.send("ledger.entry", { n: 1 });
    for (const n of [2, 3]) await f.send("ledger.entry", { n });
    await expect.poll(() => f.status(first, id), { timeout: 15_000 }).toBe("retrying");
    await page.reload();
    const state = page.locator(".delivery-state");
    await state.getByText(/in order: 2 waiting behind event/).waitFor();
    await state.getByText(/Its attempt 1 failed \(HTTP 500\); the next is at/).waitFor();
    await checkView(watched, "portal-endpoint-fifo-held");
    // Nothing behind it was sent: the attempts held (and the retry not due) wait, none in flight.
    expect(receiver.received("/ledger")).toHaveLength(1);
    const attempts = page.getByRole("table").last();
    await expect.poll(() => attempts.getByRole("cell", { name: "Waiting", exact: true }).count()).toBe(3);
    expect(await attempts.getByRole("cell", { name: "In flight", exact: true }).count()).toBe(0);

    await state.getByRole("link", { name: first }).click();
    await page.waitForURL(new RegExp(`/portal/events/${first}$`));
    await page.getByRole("heading", { level: 1 }).first().waitFor();
  });
});
