import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { expectAccessible, signedIn } from "../support/dashboard.ts";
import { setupApp } from "../support/fixtures.ts";
import { checkView, portalLink } from "../support/portal.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Destinations beyond HTTP in the portal, in Chromium, against the whole system: a RabbitMQ and
 * an S3 destination made through the form (the URL built from its fields, percent-encoded, the
 * credentials sealed and shown as `[redacted]`), edited keeping the credentials, a webhook made
 * a destination; the form's own checks and the API's 400 at the URL; and attempts to a Redis
 * stream and to an unroutable RabbitMQ exchange, each opened in the portal: the receipt as
 * "Delivered to", the `rejected` kind with its meaning. Delivery itself is
 * test/delivery/destinations.test.ts.
 */
let sys: TestSystem;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let redis: Redis;
const run = randomBytes(4).toString("hex");
const stream = `t_web_${run}`;

const form = (name: "Add an endpoint" | "Edit endpoint") => page.getByRole("form", { name });
const label = (within: Locator, name: string) => within.getByLabel(name, { exact: true });
/** The URL's credentials as sealed at rest, opened as the sender opens them. */
async function savedCredentials(id: string) {
  const row = await sys.gateway.deps.prisma.endpoint.findUniqueOrThrow({ where: { id } });
  return JSON.parse(sys.gateway.deps.secrets.open(row.authSealed!, `endpoint:${id}:auth`)).url_credentials;
}
const endpointOf = async (id: string) => (await sys.request("GET", `/v3/endpoints/${id}`)).body;
const idFromPage = () => new URL(page.url()).pathname.split("/").pop()!;
/** Deleted once checked: the events the later tests send go to their endpoints only. */
async function drop(id: string) {
  // Off its page first, which would ask for its stats after it is gone.
  await page.goto(`${sys.url}/portal/catalog`);
  await page.getByRole("heading", { level: 1 }).first().waitFor();
  expect((await sys.request("DELETE", `/v3/endpoints/${id}`)).status).toBe(200);
}
async function send(data: Record<string, unknown> = { n: 1 }) {
  const res = await sys.request("POST", "/v3/events", { json: { app: "acme", type: "invoice.paid", data } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  [sys, browser] = await Promise.all([startSystem({ RETRY_SCHEDULE: "1s,1s,1s" }), launchBrowser()]);
  await setupApp(sys, ["invoice.paid"]);
  redis = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true });
  await redis.connect();
  watched = await openPage(browser);
  page = watched.page;
  page.setDefaultTimeout(15_000);
  await page.goto(await portalLink(sys, "acme"));
  await page.getByRole("heading", { level: 1 }).first().waitFor();
});
afterEach(() => watched?.expectClean());
afterAll(async () => {
  await redis?.del(stream);
  redis?.disconnect();
  await browser?.close();
  await sys?.close();
});

describe("destinations in the endpoint form", () => {
  it("makes a RabbitMQ destination from its fields, checks them first, and keeps its credentials on edit", async () => {
    await page.goto(`${sys.url}/portal/endpoints/new`);
    const add = form("Add an endpoint");
    // Webhook (HTTP) first; its headers and authentication are for webhooks only.
    expect(await label(add, "Type").inputValue()).toBe("http");
    await add.getByRole("group", { name: "Authentication" }).waitFor();
    await label(add, "Type").selectOption({ label: "RabbitMQ" });
    await add.getByRole("group", { name: "RabbitMQ destination" }).waitFor();
    expect(await add.getByRole("group", { name: "Authentication" }).count()).toBe(0);
    expect(await add.getByRole("button", { name: "Add header" }).count()).toBe(0);

    // Nothing typed: held back by the form's own checks, the first field focused, nothing sent.
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname.startsWith("/v3/endpoints")) sent.push(r.url());
    });
    await add.getByRole("button", { name: "Create endpoint" }).click();
    await add.getByText("Not saved: the destination's fields need fixing (marked below).").waitFor();
    await add.locator(".field-error").getByText("Enter the server's host name or address.").waitFor();
    await add
      .locator(".field-error")
      .getByText("Enter an exchange, a routing key or both", { exact: false })
      .waitFor();
    expect(await label(add, "Host").evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await label(add, "Host").getAttribute("aria-invalid")).toBe("true");
    expect(sent).toEqual([]);

    await label(add, "Host").fill("mq.example.com");
    await label(add, "Port").fill("5999");
    await add.getByLabel("Connect over TLS (amqps://)").check();
    await label(add, "Virtual host").fill("shop/eu");
    await label(add, "Exchange").fill("orders");
    await label(add, "Routing key").fill("invoice.paid");
    await label(add, "User name").fill("ann");
    await label(add, "Password").fill("p@ss:w/rd %");
    expect(await label(add, "Password").getAttribute("type")).toBe("password");
    // The URL as it will be sent, the password as dots.
    expect(await label(add, "URL").inputValue()).toBe(
      "amqps://ann:••••••@mq.example.com:5999/shop%2Feu?exchange=orders&routing_key=invoice.paid",
    );
    await checkView(watched, "portal-destination-amqp-form");
    await add.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/portal\/endpoints\/ep_[^/]+$/);
    const id = idFromPage();
    const shown = "amqps://[redacted]@mq.example.com:5999/shop%2Feu?exchange=orders&routing_key=invoice.paid";
    expect((await endpointOf(id)).url).toBe(shown);
    // Percent-encoded in the URL sent, the credentials are saved as typed.
    expect(await savedCredentials(id)).toEqual({ username: "ann", password: "p@ss:w/rd %" });
    await page.getByRole("heading", { level: 1, name: shown }).waitFor();
    const props = page.locator("dl.props");
    expect(await props.locator('[data-type="amqp"]').textContent()).toBe("RabbitMQ");
    await props.getByText("The credentials in the URL", { exact: false }).waitFor();
    expect(await page.content()).not.toContain("p@ss");
    await checkView(watched, "portal-destination-amqp-detail");

    // Read back into the fields, the credentials saved and not shown; kept while left empty.
    await page.goto(`${sys.url}/portal/endpoints/${id}/edit`);
    const edit = form("Edit endpoint");
    await edit.getByRole("group", { name: "RabbitMQ destination" }).waitFor();
    expect(await label(edit, "Type").inputValue()).toBe("amqp");
    expect(await label(edit, "Host").inputValue()).toBe("mq.example.com");
    expect(await label(edit, "Port").inputValue()).toBe("5999");
    expect(await edit.getByLabel("Connect over TLS (amqps://)").isChecked()).toBe(true);
    expect(await label(edit, "Virtual host").inputValue()).toBe("shop/eu");
    expect(await label(edit, "Exchange").inputValue()).toBe("orders");
    expect(await label(edit, "Routing key").inputValue()).toBe("invoice.paid");
    expect(await label(edit, "User name").inputValue()).toBe("");
    expect(await label(edit, "Password").inputValue()).toBe("");
    await edit.getByText("Saved — leave both empty to keep them", { exact: false }).waitFor();
    expect(await label(edit, "URL").inputValue()).toBe(shown);
    await checkView(watched, "portal-destination-amqp-edit");

    // Another server with the saved credentials: asked for them again, nothing sent.
    await label(edit, "Host").fill("elsewhere.example.com");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit
      .locator(".field-error")
      .getByText("The destination moves to another server", { exact: false })
      .waitFor();
    expect(await label(edit, "User name").evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(sent).toHaveLength(1);

    await label(edit, "Host").fill("mq.example.com");
    await label(edit, "Routing key").fill("invoice.refunded");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${id}$`));
    expect((await endpointOf(id)).url).toBe(
      "amqps://[redacted]@mq.example.com:5999/shop%2Feu?exchange=orders&routing_key=invoice.refunded",
    );
    expect(await savedCredentials(id)).toEqual({ username: "ann", password: "p@ss:w/rd %" });
    expect(sent).toHaveLength(2);
    await drop(id);
  });

  it("makes an S3 destination with an access key, edits it keeping the key, and shows the API's 400 at the URL", async () => {
    await page.goto(`${sys.url}/portal/endpoints/new`);
    const add = form("Add an endpoint");
    await label(add, "Type").selectOption({ label: "S3" });
    await add.getByRole("group", { name: "S3 destination" }).waitFor();
    await label(add, "Bucket").fill("acme-hooks");
    await label(add, "Key prefix").fill("in coming/");
    await label(add, "Server URL").fill("https://s3.example.com:9000");
    await label(add, "Region").fill("eu-west-1");
    await label(add, "Access key ID").fill("AKIAEXAMPLE");
    await label(add, "Secret access key").fill("se/cr+et key");
    expect(await label(add, "Secret access key").getAttribute("type")).toBe("password");
    await checkView(watched, "portal-destination-s3-form");
    await add.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/portal\/endpoints\/ep_[^/]+$/);
    const id = idFromPage();
    const shown =
      "s3://[redacted]@acme-hooks/in%20coming/?endpoint=https://s3.example.com:9000&region=eu-west-1";
    expect((await endpointOf(id)).url).toBe(shown);
    expect(await savedCredentials(id)).toEqual({ username: "AKIAEXAMPLE", password: "se/cr+et key" });
    await page.getByRole("heading", { level: 1, name: shown }).waitFor();
    expect(await page.locator('dl.props [data-type="s3"]').textContent()).toBe("S3");
    expect(await page.content()).not.toContain("se/cr");

    // The list shows its type beside its URL, as the API gives it.
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Endpoints" }).click();
    const card = page.getByRole("listitem").filter({ has: page.getByRole("link", { name: shown }) });
    expect(await card.locator('[data-type="s3"]').textContent()).toBe("S3");
    await checkView(watched, "portal-destination-list");

    await page.goto(`${sys.url}/portal/endpoints/${id}/edit`);
    const edit = form("Edit endpoint");
    await edit.getByRole("group", { name: "S3 destination" }).waitFor();
    expect(await label(edit, "Bucket").inputValue()).toBe("acme-hooks");
    expect(await label(edit, "Key prefix").inputValue()).toBe("in coming/");
    expect(await label(edit, "Server URL").inputValue()).toBe("https://s3.example.com:9000");
    expect(await label(edit, "Region").inputValue()).toBe("eu-west-1");
    expect(await label(edit, "Access key ID").inputValue()).toBe("");
    await edit.getByText("Saved — leave both empty to keep them", { exact: false }).waitFor();
    await label(edit, "Key prefix").fill("archive/2026/");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${id}$`));
    expect((await endpointOf(id)).url).toBe(
      "s3://[redacted]@acme-hooks/archive/2026/?endpoint=https://s3.example.com:9000&region=eu-west-1",
    );
    expect(await savedCredentials(id)).toEqual({ username: "AKIAEXAMPLE", password: "se/cr+et key" });

    // A URL the form's checks pass but the API refuses (longer than its 2048 characters): the
    // API's message at the URL field, focused; nothing saved. (Another server: the key again.)
    await page.goto(`${sys.url}/portal/endpoints/${id}/edit`);
    await label(edit, "Access key ID").fill("AKIANEW");
    await label(edit, "Secret access key").fill("other");
    await label(edit, "Key prefix").fill(`${"k/".repeat(255)}`);
    await label(edit, "Server URL").fill(`https://${"s".repeat(60)}.example.com/${"p".repeat(1500)}`);
    await edit.getByRole("button", { name: "Save changes" }).click();
    const urlError = edit.locator(".field-error").filter({ hasText: /2048/ });
    await urlError.waitFor();
    watched.expectOnly([/status of 400/]);
    expect(await label(edit, "URL").getAttribute("aria-invalid")).toBe("true");
    expect(await label(edit, "URL").evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect((await endpointOf(id)).url).toContain("/archive/2026/");
    expect(await savedCredentials(id)).toEqual({ username: "AKIAEXAMPLE", password: "se/cr+et key" });
    await drop(id);
  });

  it("makes a webhook a destination, dropping what is for webhooks only", async () => {
    const made = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: "https://example.com/hook", headers: { "X-Shop": "acme" } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    await page.goto(`${sys.url}/portal/endpoints/${id}/edit`);
    const edit = form("Edit endpoint");
    expect(await label(edit, "URL").inputValue()).toBe("https://example.com/hook");
    await label(edit, "Type").selectOption({ label: "Redis Streams" });
    await edit.getByText("this endpoint loses its custom headers", { exact: false }).waitFor();
    await label(edit, "Host").fill("redis.example.com");
    await label(edit, "Stream").fill("orders");
    await label(edit, "Maximum length").fill("1000");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${id}$`));
    expect(await endpointOf(id)).toMatchObject({
      url: "redis://redis.example.com?stream=orders&maxlen=1000",
      headers: {},
    });
    await drop(id);
  });
});

describe("a destination's attempts in the portal", () => {
  /** The first attempt of the endpoint once it is no longer pending. */
  async function settledAttempt(endpoint: string) {
    let attempt: Record<string, unknown> | undefined;
    await expect
      .poll(
        async () => {
          attempt = (await sys.request("GET", `/v3/attempts?endpoint=${endpoint}`)).body.data.at(-1);
          return attempt?.status;
        },
        { timeout: 20_000 },
      )
      .toMatch(/^(succeeded|failed)$/);
    return attempt!;
  }

  it("shows a Redis stream's receipt as where the event was delivered", async () => {
    const made = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `redis://127.0.0.1:6379/0?stream=${stream}` },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const event = await send({ amount: 4200 });
    const attempt = await settledAttempt(made.body.id);
    const entries = await redis.xrange(stream, "-", "+");
    expect(entries).toHaveLength(1);
    const entryId = entries[0]![0];
    const receipt = `stream ${stream}, entry ${entryId}`;
    expect(attempt).toMatchObject({ status: "succeeded", response_status: null, response_body: receipt });

    // In the endpoint's attempts, then the attempt itself.
    await page.goto(`${sys.url}/portal/endpoints/${made.body.id}`);
    const table = page.getByRole("table", { name: "Recent attempts" });
    await table.getByText(`Delivered to ${receipt}`).waitFor();
    await table.getByRole("link", { name: /^Attempt 1/ }).click();
    await page.getByRole("heading", { level: 1, name: "Attempt 1" }).waitFor();
    const delivered = page.getByRole("region", { name: "Delivered to" });
    expect(await delivered.getByText(receipt, { exact: true }).count()).toBe(1);
    const props = page.locator("dl.props");
    expect(await props.getByText("Delivered to", { exact: true }).count()).toBe(1);
    expect(await props.getByText("Response status").count()).toBe(0);
    expect(await page.getByRole("region", { name: "Response" }).count()).toBe(0);
    expect(await props.locator('[data-type="redis"]').textContent()).toBe("Redis Streams");
    await page.getByRole("region", { name: "Message" }).getByText(`Published to redis://`).waitFor();
    await checkView(watched, "portal-destination-attempt");

    // The event's deliveries name it by its type and where on the server it goes.
    await page.goto(`${sys.url}/portal/events/${event}`);
    await page.getByText(`Redis Streams 127.0.0.1:6379/0?stream=${stream}`).first().waitFor();
  });

  it("shows an attempt the destination refused with the meaning of `rejected`", async () => {
    // amq.direct has no binding for this key: the broker returns the message (NO_ROUTE).
    const made = await sys.request("POST", "/v3/endpoints", {
      json: {
        app: "acme",
        url: `amqp://guest:guest@127.0.0.1:5672/?exchange=amq.direct&routing_key=t_web_${run}_nowhere`,
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await send();
    const attempt = await settledAttempt(made.body.id);
    expect(attempt).toMatchObject({ status: "failed", error: "rejected", response_status: null });

    await page.goto(`${sys.url}/portal/attempts/${attempt.id}`);
    await page.getByRole("heading", { level: 1, name: "Attempt 1" }).waitFor();
    const props = page.locator("dl.props");
    await props.getByText("The destination's server refused the message", { exact: false }).waitFor();
    const delivered = page.getByRole("region", { name: "Delivered to" });
    await delivered.getByText("Not delivered (rejected)").waitFor();
    // Why, in the broker's words, as the attempt recorded them.
    expect(attempt.response_body).toMatch(/NO_ROUTE/);
    await delivered.getByText(attempt.response_body as string).waitFor();
    await checkView(watched, "portal-destination-rejected");
  });

  it("shows them on the dashboard: the receipt and the error among every app's attempts, the types among its endpoints", async () => {
    const { watched: board, page: dash } = await signedIn(browser, sys.url, sys.key);
    try {
      const endpoints = dash.getByRole("region", { name: "Endpoints, failing first" });
      await endpoints.locator('[data-type="redis"]').first().waitFor();
      await endpoints.locator('[data-type="amqp"]').first().waitFor();
      await dash.goto(`${sys.url}/dashboard/attempts`);
      const table = dash.getByRole("table", { name: "Attempts" });
      await table.getByText(`Delivered to stream ${stream}, entry`, { exact: false }).first().waitFor();
      await table.getByRole("cell", { name: "rejected", exact: true }).first().waitFor();
      await expectAccessible(dash);
      board.expectClean();
    } finally {
      await board.close();
    }
  });
});
