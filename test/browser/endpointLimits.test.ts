import pg from "pg";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { expectAccessible, signedIn } from "../support/dashboard.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectList } from "../support/openapi.ts";
import { checkView, portalLink } from "../support/portal.ts";

/**
 * An endpoint's delivery limits and delivery state in the pages, in Chromium: the limits set
 * through the portal's form, and a paused (and a throttled) endpoint shown in the portal and on
 * the dashboard. The gateway alone: no dispatcher runs, so the flow rows written here stay as
 * they are (the release gate would otherwise keep them, or end the pause, on its own).
 */
let gw: TestGateway;
let browser: Browser;
let db: pg.Client;
let watched: WatchedPage;
let page: Page;
const ids = { limited: "", stuck: "", slowed: "", off: "", calm: "" };
const URLS = {
  limited: "https://example.com/limited",
  stuck: "https://example.com/stuck",
  slowed: "https://example.com/slowed",
  off: "https://example.com/off",
  calm: "https://example.com/calm",
};

const endpoint = async (id: string) => (await gw.request("GET", `/v3/endpoints/${id}`)).body;
const card = (url: string): Locator => page.locator("li.endpoint-card").filter({ hasText: url });

beforeAll(async () => {
  [gw, browser] = await Promise.all([startGateway(), launchBrowser()]);
  db = new pg.Client({ connectionString: gw.databaseUrl });
  await db.connect();
  expect((await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).status).toBe(201);
  for (const name of Object.keys(ids) as (keyof typeof ids)[]) {
    const res = await gw.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: URLS[name], ...(name === "off" ? { disabled: true } : {}) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids[name] = res.body.id;
  }
  // What the release gate writes when attempts in a row time out (the breaker opens), and after
  // a 429 without Retry-After (a slow-down): no real failures waited for.
  await db.query(
    `UPDATE endpoint_flows SET pause_reason = 'not_responding', paused_until = now() + interval '5 minutes'
     WHERE endpoint_id = $1`,
    [ids.stuck],
  );
  await db.query(
    `UPDATE endpoint_flows SET limit_now = 2, slow_until = now() + interval '5 minutes' WHERE endpoint_id = $1`,
    [ids.slowed],
  );
  watched = await openPage(browser);
  page = watched.page;
  page.setDefaultTimeout(15_000);
  await page.goto(await portalLink(gw, "acme"));
  await page.getByRole("link", { name: URLS.calm }).waitFor();
});
afterEach(() => watched?.expectClean());
afterAll(async () => {
  await browser?.close();
  await db?.end();
  await gw?.close();
});

describe("an endpoint's delivery limits in the portal", () => {
  it("sets a rate limit and max in flight through the form, shows a 400 at its field, and clears one", async () => {
    await page.goto(`${gw.url}/portal/endpoints/${ids.limited}/edit`);
    const form = page.getByRole("form", { name: "Edit endpoint" });
    const limits = form.getByRole("group", { name: "Delivery limits" });
    await limits.getByText(/waiting never fails a delivery/).waitFor();
    const rate = limits.getByLabel("Rate limit (deliveries a second)");
    const inFlight = limits.getByLabel("Max in flight (attempts at once)");
    expect([await rate.inputValue(), await inFlight.inputValue()]).toEqual(["", ""]);

    // Out of range: the API's 400, at the field, which takes the focus.
    await rate.fill("20000");
    await form.getByRole("button", { name: "Save changes" }).click();
    await limits
      .locator(".field-error")
      .getByText(/rate_limit/)
      .waitFor();
    expect(await rate.getAttribute("aria-invalid")).toBe("true");
    expect(await inFlight.getAttribute("aria-invalid")).toBeNull();
    expect(await rate.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    watched.expectOnly([/status of 400/]);
    expect((await endpoint(ids.limited)).rate_limit).toBeNull();
    await checkView(watched, "portal-endpoint-limits-error");

    // What the browser cannot read as a number is told at the field, not saved as "no limit".
    await rate.fill("50");
    await inFlight.pressSequentially("1e");
    await form.getByRole("button", { name: "Save changes" }).click();
    await limits.getByText("Enter a whole number, or leave it empty.").waitFor();
    expect(await inFlight.getAttribute("aria-invalid")).toBe("true");
    expect(await inFlight.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect((await endpoint(ids.limited)).max_in_flight).toBeNull();

    await inFlight.fill("8");
    await form.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${ids.limited}$`));
    const props = page.getByRole("region", { name: "Properties" });
    await props.getByText("50 deliveries a second").waitFor();
    await props.getByText("8 attempts at once").waitFor();
    expect(await endpoint(ids.limited)).toMatchObject({ rate_limit: 50, max_in_flight: 8 });

    // Emptied: no limit again (null), the other one kept.
    await page.goto(`${gw.url}/portal/endpoints/${ids.limited}/edit`);
    expect(await rate.inputValue()).toBe("50");
    await rate.fill("");
    await form.getByRole("button", { name: "Save changes" }).click();
    await props.getByText("No limit").waitFor();
    await props.getByText("8 attempts at once").waitFor();
    expect(await endpoint(ids.limited)).toMatchObject({ rate_limit: null, max_in_flight: 8 });
  });
});

describe("an endpoint's delivery state", () => {
  it("shows a paused and a throttled endpoint in the portal's list, told apart, and nothing for the others", async () => {
    const until = (await endpoint(ids.stuck)).delivery_state.until as string;
    expect(until).toMatch(/^\d{4}-/);
    await page.goto(`${gw.url}/portal`);
    const stuck = card(URLS.stuck).locator(".delivery-state");
    await stuck.getByText(/not responding; next try at/).waitFor();
    expect(await stuck.locator("[data-status=paused]").textContent()).toMatch(/paused/);
    // The time as the pages show times, the exact one in its datetime attribute.
    expect(await stuck.locator("time").getAttribute("datetime")).toBe(until);
    await stuck
      .getByText(/^Attempts in a row timed out or could not connect\. Deliveries are held, not failed/)
      .waitFor();

    const slowed = card(URLS.slowed).locator(".delivery-state");
    await slowed.getByText(/slowed down after a 429, 502 or 504; until/).waitFor();
    await slowed.locator("[data-status=throttled]").waitFor();
    await slowed.getByText(/^Fewer attempts go at once for a while\. Deliveries wait their turn/).waitFor();
    const colour = (l: Locator) =>
      l.locator(".badge").evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).color);
    expect(await colour(stuck)).not.toBe(await colour(slowed));

    // Active endpoints have no line; a disabled one says so with its own badge alone.
    for (const url of [URLS.calm, URLS.limited, URLS.off])
      expect(await card(url).locator(".delivery-state").count(), url).toBe(0);
    await checkView(watched, "portal-endpoints-delivery-state");
  });

  it("shows a paused endpoint's state in its detail", async () => {
    await page.goto(`${gw.url}/portal/endpoints/${ids.stuck}`);
    const props = page.getByRole("region", { name: "Properties" });
    const line = props.locator(".delivery-state");
    await line.getByText(/not responding; next try at/).waitFor();
    await line.getByText(/Deliveries are held, not failed/).waitFor();
    await props.getByText("No limit").waitFor();
    await props.getByText("Herald's default").waitFor();
    await checkView(watched, "portal-endpoint-paused");
  });

  it("lists the paused endpoint right after the failing ones, with its state, through the API", async () => {
    const res = await gw.request("GET", "/v3/stats/endpoints?app=acme");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectList(res.body, "EndpointHealth");
    const data = res.body.data as { endpoint: string; delivery_state: Record<string, unknown> }[];
    // None failing here: paused first, then disabled, then the rest (none has attempts) by id.
    expect(data.map((h) => h.endpoint)).toEqual([
      ids.stuck,
      ids.off,
      ...[ids.limited, ids.slowed, ids.calm].sort(),
    ]);
    const of = (id: string) => data.find((h) => h.endpoint === id)!.delivery_state;
    // The same state as the endpoint's own.
    for (const id of Object.values(ids)) expect(of(id), id).toEqual((await endpoint(id)).delivery_state);
    expect(of(ids.stuck)).toMatchObject({ state: "paused", reason: "not_responding" });
    expect(of(ids.slowed)).toMatchObject({ state: "throttled", reason: "slow_down" });
    expect(of(ids.off)).toMatchObject({ state: "disabled", reason: "disabled", until: null });
    expect(of(ids.calm)).toMatchObject({ state: "active", reason: null, until: null });
  });

  it("shows it on the dashboard's endpoints, paused ones counted", async () => {
    const dash = await signedIn(browser, gw.url, gw.key);
    try {
      const table = dash.page.getByRole("table", { name: "Endpoints, failing first" });
      const first = table.locator("tbody tr").first();
      await first.getByRole("link", { name: URLS.stuck }).waitFor();
      await first.locator("[data-status=paused]").waitFor();
      await first.getByText(/not responding; next try at/).waitFor();
      await table.locator("tbody tr", { hasText: URLS.slowed }).locator("[data-status=throttled]").waitFor();
      await dash.page.getByRole("status").getByText("None failing · 1 paused").waitFor();
      await expectAccessible(dash.page);
      await dash.watched.screenshot("dashboard-endpoint-paused");
      dash.watched.expectClean();
    } finally {
      await dash.watched.close();
    }
  });
});
