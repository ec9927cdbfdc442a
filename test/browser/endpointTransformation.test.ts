import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { expectAccessible, signedIn } from "../support/dashboard.ts";
import { checkView, portalLink } from "../support/portal.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * An endpoint's transformation in the portal, in Chromium, against the whole system: written in
 * the endpoint form from its starter, tried on a type's example and on data of one's own (the
 * request it would make, or its cancel), a syntax error's line shown in the try-it panel and by
 * the API's refusal on save (marked beside the code, the caret put on it), saved and shown on
 * the endpoint; then delivered to a local receiver, the attempt showing the transformed request,
 * a cancelled one its own status, and one whose transformation threw no request but why; tried
 * again on edit, and removed.
 */
let sys: TestSystem;
let receiver: Receiver;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let endpointId = "";

/** Its example payload, made from the schema: `{ amount: 250, currency: "EUR" }`. */
const ORDER_SCHEMA = {
  type: "object",
  required: ["amount", "currency"],
  properties: { amount: { type: "number", examples: [250] }, currency: { type: "string", default: "EUR" } },
};

const RESHAPE = `function handler(webhook) {
  const { amount, currency } = webhook.payload.data;
  webhook.payload = { text: "Order of " + amount + " " + currency };
  webhook.headers["x-source"] = "portal";
  return webhook;
}`;
const CANCEL_SMALL = RESHAPE.replace(
  "  webhook.payload =",
  "  if (amount < 100) webhook.cancel = true;\n  webhook.payload =",
);
/** Line 3 does not parse. */
const BROKEN = RESHAPE.replace('"Order of " + amount', '"Order of " + + amount +;');

const form = (name: "Add an endpoint" | "Edit endpoint") => page.getByRole("form", { name });
const box = (within: Locator) => within.getByLabel("Transformation", { exact: true });
const tryIt = (within: Locator) => within.getByRole("group", { name: "Try it" });
const focused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);
/** The box's selection: where the caret is put on a failing line. */
const selection = (locator: Locator) =>
  locator.evaluate((el) => {
    const t = el as unknown as { selectionStart: number; selectionEnd: number };
    return { start: t.selectionStart, end: t.selectionEnd };
  });
/** Where line `n` of `text` starts and ends. */
function lineAt(text: string, n: number) {
  const lines = text.split("\n");
  const start = lines.slice(0, n - 1).join("\n").length + (n > 1 ? 1 : 0);
  return { start, end: start + lines[n - 1]!.length };
}
const endpointOf = async (id: string) => (await sys.request("GET", `/v3/endpoints/${id}`)).body;
async function run(within: Locator) {
  await tryIt(within).getByRole("button", { name: "Run", exact: true }).click();
  await tryIt(within).getByRole("button", { name: "Run", exact: true }).waitFor();
}

beforeAll(async () => {
  [sys, receiver, browser] = await Promise.all([startSystem(), startReceiver(), launchBrowser()]);
  expect((await sys.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).status).toBe(201);
  const type = await sys.request("POST", "/v3/event-types", {
    json: { name: "order.created", description: "An order was placed.", schema: ORDER_SCHEMA },
  });
  expect(type.status, JSON.stringify(type.body)).toBe(201);
  watched = await openPage(browser);
  page = watched.page;
  page.setDefaultTimeout(15_000);
  await page.goto(await portalLink(sys, "acme"));
  await page.getByRole("heading", { level: 1 }).first().waitFor();
});
afterEach(() => watched?.expectClean());
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.close();
});

describe("an endpoint's transformation in the portal", () => {
  it("is written from the starter, tried on an example and on own data, and shows what it would send", async () => {
    await page.goto(`${sys.url}/portal/endpoints/new`);
    const f = form("Add an endpoint");
    await f.getByLabel("URL").fill(`${receiver.url}/orders`);
    const code = box(f);
    const panel = tryIt(f);
    const verdict = panel.getByRole("status");
    expect(await code.inputValue()).toBe("");
    expect(await panel.getByRole("button", { name: "Run" }).isDisabled()).toBe(true);

    // The starter changes nothing: the request is the one Herald would send anyway.
    await f.getByRole("button", { name: "Start from an example" }).click();
    expect(await code.inputValue()).toContain("function handler(webhook) {");
    await f.getByRole("button", { name: "Remove transformation" }).waitFor();
    expect(await panel.getByLabel("Event type to try").inputValue()).toBe("order.created");
    await run(f);
    await verdict.getByText("This request would be sent:").waitFor();
    await panel.getByText(`POST ${receiver.url}/orders`, { exact: true }).waitFor();
    const body = panel.getByRole("figure", { name: "The body that would be sent" }).locator("pre");
    expect(JSON.parse((await body.textContent())!)).toMatchObject({
      type: "order.created",
      data: { amount: 250, currency: "EUR" },
    });

    // Its own code: the body it makes, pretty-printed, and the header it adds.
    await code.fill(RESHAPE);
    await verdict.getByText("The code has changed since this run.").waitFor();
    await run(f);
    await body.getByText('"text": "Order of 250 EUR"').waitFor();
    expect(await body.textContent()).toBe(JSON.stringify({ text: "Order of 250 EUR" }, null, 2));
    await panel.getByText("x-source: portal", { exact: true }).waitFor();
    await checkView(watched, "portal-transformation-tried");

    // On data of one's own, prefilled with the example; a small order is cancelled.
    await panel.getByLabel("Use event data of my own").check();
    const data = panel.getByLabel("Event data (JSON)");
    expect(JSON.parse(await data.inputValue())).toEqual({ amount: 250, currency: "EUR" });
    await data.fill(JSON.stringify({ amount: 5, currency: "USD" }));
    await run(f);
    await body.getByText('"text": "Order of 5 USD"').waitFor();
    await code.fill(CANCEL_SMALL);
    await run(f);
    await verdict.getByText("Cancelled: this event would not be delivered.").waitFor();
    expect(await body.count()).toBe(0);
    await data.fill("[1, 2]");
    await run(f);
    await verdict.getByText('The event data is a JSON object, such as {"amount": 100}.').waitFor();
    await panel.getByLabel("Use event data of my own").uncheck();
  });

  it("shows a syntax error's line when tried and when saved, then saves a valid one", async () => {
    const f = form("Add an endpoint");
    const code = box(f);
    const verdict = tryIt(f).getByRole("status");
    const line3 = lineAt(BROKEN, 3);
    const marked = f.locator(".code-gutter-marked");

    await code.fill(BROKEN);
    await run(f);
    await verdict.getByText(/^SyntaxError: .+ \(line 3\)$/).waitFor();
    expect(await marked.textContent()).toBe("3");
    // The caret is on the line, focus stays where the answer is read; "Go to line" takes it there.
    expect(await selection(code)).toEqual(line3);
    expect(await focused(code)).toBe(false);
    await code.evaluate((el) =>
      (el as unknown as { setSelectionRange(a: number, b: number): void }).setSelectionRange(0, 0),
    );
    await verdict.getByRole("button", { name: "Go to line 3" }).click();
    expect(await focused(code)).toBe(true);
    expect(await selection(code)).toEqual(line3);
    // Fixed, the mark goes.
    await code.fill(RESHAPE);
    expect(await marked.count()).toBe(0);

    // The API refuses it on save, at the field, naming the line: focus and caret go there.
    await code.fill(BROKEN);
    await code.evaluate((el) =>
      (el as unknown as { setSelectionRange(a: number, b: number): void }).setSelectionRange(0, 0),
    );
    await f.getByRole("button", { name: "Create endpoint" }).click();
    const fieldError = f.locator(".transformation-field > .field-error");
    await fieldError.getByText(/^SyntaxError: .+ \(line 3\)/).waitFor();
    watched.expectOnly([/status of 400/]);
    await expect.poll(() => focused(code)).toBe(true);
    expect(await selection(code)).toEqual(line3);
    expect(await marked.textContent()).toBe("3");
    expect(await code.getAttribute("aria-invalid")).toBe("true");
    const described = (await code.getAttribute("aria-describedby"))!.split(" ");
    expect(described).toContain(await fieldError.getAttribute("id"));
    expect((await sys.request("GET", "/v3/endpoints?app=acme")).body.data).toEqual([]);
    await checkView(watched, "portal-transformation-refused");

    await code.fill(CANCEL_SMALL);
    await f.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/portal\/endpoints\/ep_[^/]+$/);
    endpointId = new URL(page.url()).pathname.split("/").pop()!;
    expect(await endpointOf(endpointId)).toMatchObject({
      url: `${receiver.url}/orders`,
      transformation: CANCEL_SMALL,
    });
    const shown = page.getByRole("figure", { name: "The endpoint's transformation" }).locator("pre");
    expect(await shown.textContent()).toBe(CANCEL_SMALL);
    await checkView(watched, "portal-transformation-detail");
  });

  it("delivers the request it made, shown on the attempt as transformed, and a cancelled one as cancelled", async () => {
    const send = async (data: Record<string, unknown>) => {
      const res = await sys.request("POST", "/v3/events", {
        json: { app: "acme", type: "order.created", data },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    const big = await send({ amount: 420, currency: "EUR" });
    const small = await send({ amount: 7, currency: "EUR" });
    const attemptOf = async (event: string) =>
      (await sys.request("GET", `/v3/attempts?event=${event}`)).body.data[0] as
        | { id: string; status: string }
        | undefined;
    await expect.poll(async () => (await attemptOf(big))?.status, { timeout: 20_000 }).toBe("succeeded");
    await expect.poll(async () => (await attemptOf(small))?.status, { timeout: 20_000 }).toBe("cancelled");
    expect(receiver.received("/orders").map((r) => r.body)).toEqual([
      JSON.stringify({ text: "Order of 420 EUR" }),
    ]);

    // The endpoint's attempts: the cancelled one with its own badge and words.
    await page.goto(`${sys.url}/portal/endpoints/${endpointId}`);
    const table = page.getByRole("table", { name: "Recent attempts" });
    await table.locator('[data-status="cancelled"]').waitFor();
    await table.getByText("Cancelled by its transformation").waitFor();
    await table.locator('[data-status="succeeded"]').waitFor();

    const bigAttempt = (await attemptOf(big))!;
    await page.goto(`${sys.url}/portal/attempts/${bigAttempt.id}`);
    const request = page.getByRole("region", { name: "Transformed request" });
    await request.getByText("Made by the endpoint's transformation", { exact: false }).waitFor();
    await request.getByText(`POST ${receiver.url}/orders`, { exact: true }).waitFor();
    await request.getByRole("heading", { name: "Transformed body" }).waitFor();
    const sent = request.getByRole("figure", { name: "Request body" }).locator("pre");
    expect(await sent.textContent()).toBe(JSON.stringify({ text: "Order of 420 EUR" }, null, 2));
    await checkView(watched, "portal-transformation-attempt");

    const smallAttempt = (await attemptOf(small))!;
    await page.goto(`${sys.url}/portal/attempts/${smallAttempt.id}`);
    await page.getByRole("heading", { level: 1, name: "Attempt 1" }).waitFor();
    await page.locator('.page-header [data-status="cancelled"]').waitFor();
    await page
      .getByRole("region", { name: "Request" })
      .getByText("Cancelled: the endpoint's transformation cancelled it, and nothing was sent.")
      .waitFor();
    await page.getByRole("region", { name: "Response" }).getByText("None: no request was made.").waitFor();
    expect(
      await page
        .getByRole("region", { name: "Request" })
        .getByText(/^POST /)
        .count(),
    ).toBe(0);
    await checkView(watched, "portal-transformation-cancelled");

    // The event's deliveries say so too.
    await page.goto(`${sys.url}/portal/events/${small}`);
    await page.locator('[data-status="cancelled"]').first().waitFor();

    // And the dashboard's attempts, filtered to the cancelled ones.
    const { watched: board, page: dash } = await signedIn(browser, sys.url, sys.key);
    try {
      await dash.goto(`${sys.url}/dashboard/attempts?status=cancelled`);
      const across = dash.getByRole("table", { name: "Attempts" });
      await across.getByText("Cancelled by its transformation").waitFor();
      expect(
        await across.locator("[data-status]").evaluateAll((els) => els.map((e) => e.textContent)),
      ).toEqual(["⊘ cancelled"]);
      await expectAccessible(dash);
      board.expectClean();
    } finally {
      await board.close();
    }
  });

  it("shows an attempt whose transformation threw with no request, and why", async () => {
    // An endpoint of its own, so the one this file edits keeps its attempts and its health.
    const made = await sys.request("POST", "/v3/endpoints", {
      json: {
        app: "acme",
        url: `${receiver.url}/thrown`,
        transformation:
          'function handler(webhook) {\n  throw new Error("no " + webhook.payload.data.currency);\n}',
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const thrown = made.body.id as string;
    try {
      const event = await sys.request("POST", "/v3/events", {
        json: { app: "acme", type: "order.created", data: { amount: 420, currency: "EUR" } },
      });
      expect(event.status).toBe(201);
      const first = async () =>
        (
          (await sys.request("GET", `/v3/attempts?endpoint=${thrown}`)).body.data as {
            id: string;
            attempt_number: number;
            error: string | null;
          }[]
        ).find((a) => a.attempt_number === 1);
      await expect.poll(async () => (await first())?.error, { timeout: 20_000 }).toBe("transformation_error");
      await page.goto(`${sys.url}/portal/attempts/${(await first())!.id}`);
      await page.getByRole("heading", { level: 1, name: "Attempt 1" }).waitFor();
      const request = page.getByRole("region", { name: "Request" });
      await request.getByText("None: the endpoint's transformation failed, and nothing was sent.").waitFor();
      expect(await request.getByText(/^POST /).count()).toBe(0);
      const response = page.getByRole("region", { name: "Response" });
      await response.getByText("None: no request was made.").waitFor();
      const why = response.getByRole("figure", { name: "Why no request was made" }).locator("pre");
      expect(await why.textContent()).toContain("no EUR");
      await checkView(watched, "portal-transformation-threw");
    } finally {
      expect((await sys.request("DELETE", `/v3/endpoints/${thrown}`)).status).toBeLessThan(300);
    }
    expect(receiver.received("/thrown")).toEqual([]);
  });

  it("is tried on edit as the saved endpoint, and removed", async () => {
    await page.goto(`${sys.url}/portal/endpoints/${endpointId}/edit`);
    const f = form("Edit endpoint");
    const code = box(f);
    await expect.poll(() => code.inputValue()).toBe(CANCEL_SMALL);
    await code.fill(RESHAPE.replace('"portal"', '"edited"'));
    await run(f);
    await tryIt(f).getByText("x-source: edited", { exact: true }).waitFor();
    // Only tried: the saved code did not change.
    expect((await endpointOf(endpointId)).transformation).toBe(CANCEL_SMALL);

    await f.getByRole("button", { name: "Remove transformation" }).click();
    expect(await code.inputValue()).toBe("");
    await f.getByText("Saving removes this endpoint's transformation.").waitFor();
    await f.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${endpointId}$`));
    await page
      .getByRole("region", { name: "Properties" })
      .getByText("None: events are sent as they are")
      .waitFor();
    expect(await page.getByRole("figure", { name: "The endpoint's transformation" }).count()).toBe(0);
    expect((await endpointOf(endpointId)).transformation).toBeNull();
  });
});
