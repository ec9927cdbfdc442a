import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, type WatchedPage } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { makePki, type TestPki } from "../support/pki.ts";
import { checkView, portalLink } from "../support/portal.ts";

/**
 * An endpoint's authentication in the portal, in Chromium: a client certificate and key and
 * OAuth2 client credentials set through the form, shown on its page without the key or the
 * secret, a mismatched key refused at its field, a saved secret kept when its box is left
 * empty, and asked for again when the token URL changes or the URL moves to another site. The
 * gateway alone: nothing is delivered (test/delivery/endpointMtls.test.ts and
 * endpointOAuth2.test.ts deliver).
 */
let gw: TestGateway;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let pki: TestPki;

beforeAll(async () => {
  pki = makePki();
  [gw, browser] = await Promise.all([startGateway(), launchBrowser()]);
  expect((await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } })).status).toBe(201);
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

describe("an endpoint's authentication in the portal", () => {
  it("sets mutual TLS and OAuth2 through the form, shows neither key nor secret, and keeps the secret on edit", async () => {
    await page.goto(`${gw.url}/portal/endpoints/new`);
    const form = page.getByRole("form", { name: "Add an endpoint" });
    await form.getByLabel("URL", { exact: true }).fill("https://example.com/secured");
    const auth = form.getByRole("group", { name: "Authentication" });
    await auth.getByLabel("Client certificate (PEM)").fill(pki.client.cert);
    await auth.getByLabel("Private key (PEM)").fill(pki.client.key);
    await auth.getByLabel("OAuth2 token endpoint").fill("https://auth.example.com/oauth/token");
    await auth.getByLabel("OAuth2 client ID").fill("herald");
    await auth.getByLabel("OAuth2 client secret").fill("first-secret");
    await auth.getByLabel("OAuth2 scope").fill("webhooks");
    await checkView(watched, "portal-endpoint-auth-form");
    await form.getByRole("button", { name: "Create endpoint" }).click();
    await page.waitForURL(/\/portal\/endpoints\/ep_[^/]+$/);
    const id = page.url().split("/").pop()!;
    await page.getByText(/Client certificate CN=herald-client/).waitFor();
    await page
      .getByText(/OAuth2 client herald at https:\/\/auth\.example\.com\/oauth\/token, scope webhooks/)
      .waitFor();
    expect(await page.content()).not.toContain("first-secret");
    expect(await page.content()).not.toContain("PRIVATE KEY");
    const saved = (await gw.request("GET", `/v3/endpoints/${id}`)).body;
    expect(saved.tls.client_key).toBe("[redacted]");
    expect(saved.oauth2).toMatchObject({
      client_id: "herald",
      scope: "webhooks",
      client_secret: "[redacted]",
    });
    const sealed = await gw.gateway.deps.prisma.endpoint.findUniqueOrThrow({ where: { id } });

    // A key that is not the certificate's: refused at its field; nothing saved.
    await page.goto(`${gw.url}/portal/endpoints/${id}/edit`);
    const edit = page.getByRole("form", { name: "Edit endpoint" });
    const editAuth = edit.getByRole("group", { name: "Authentication" });
    await editAuth.getByLabel("Client certificate (PEM)").fill(pki.client.cert);
    await editAuth.getByLabel("Private key (PEM)").fill(pki.stranger.key);
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit
      .locator(".field-error")
      .getByText("This key is not the client certificate's.", { exact: false })
      .waitFor();
    watched.expectOnly([/status of 400/]);
    await checkView(watched, "portal-endpoint-auth-invalid");

    // Boxes left empty keep what is saved; a new scope is saved.
    await editAuth.getByLabel("Client certificate (PEM)").fill("");
    await editAuth.getByLabel("Private key (PEM)").fill("");
    await editAuth.getByLabel("OAuth2 scope").fill("webhooks.write");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${id}$`));
    const after = (await gw.request("GET", `/v3/endpoints/${id}`)).body;
    expect(after.oauth2.scope).toBe("webhooks.write");
    expect(after.tls.client_certificate.subject).toContain("CN=herald-client");
    const resealed = await gw.gateway.deps.prisma.endpoint.findUniqueOrThrow({ where: { id } });
    const open = (row: typeof sealed) =>
      JSON.parse(gw.gateway.deps.secrets.open(row.authSealed!, `endpoint:${id}:auth`));
    expect(open(resealed).oauth2.client_secret).toBe("first-secret");
    expect(open(resealed).tls).toEqual(open(sealed).tls);

    // Another token URL, on the same site too: the form asks for the secret again, and without
    // it nothing is saved.
    await page.goto(`${gw.url}/portal/endpoints/${id}/edit`);
    const secretBox = editAuth.getByLabel("OAuth2 client secret");
    expect(await secretBox.getAttribute("required")).toBeNull();
    await editAuth.getByLabel("OAuth2 token endpoint").fill("https://auth.example.com/echo/token");
    await editAuth.getByText("The token URL changed: type the client secret again to save.").waitFor();
    expect(await secretBox.getAttribute("required")).not.toBeNull();
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit.locator(".field-error").getByText("The token URL changes", { exact: false }).waitFor();
    watched.expectOnly([/status of 400/]);
    await checkView(watched, "portal-endpoint-auth-token-url");
    expect((await gw.request("GET", `/v3/endpoints/${id}`)).body.oauth2.token_url).toBe(
      "https://auth.example.com/oauth/token",
    );
    // Set back, the form asks for nothing.
    await editAuth.getByLabel("OAuth2 token endpoint").fill("https://auth.example.com/oauth/token");
    await editAuth.getByText("Saved. Leave empty to keep it.").waitFor();

    // The URL moves to another site: the saved secret does not follow unless typed again.
    await page.goto(`${gw.url}/portal/endpoints/${id}/edit`);
    await edit.getByLabel("URL", { exact: true }).fill("https://elsewhere.example.net/secured");
    await editAuth
      .getByText("The URL moves to another site: type the client secret again", { exact: false })
      .waitFor();
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit
      .locator(".field-error")
      .getByText("The URL moves to another origin", { exact: false })
      .waitFor();
    watched.expectOnly([/status of 400/]);
    await checkView(watched, "portal-endpoint-auth-moved");
    expect((await gw.request("GET", `/v3/endpoints/${id}`)).body.url).toBe("https://example.com/secured");
    await editAuth.getByLabel("OAuth2 client secret").fill("second-secret");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/portal/endpoints/${id}$`));
    const moved = await gw.gateway.deps.prisma.endpoint.findUniqueOrThrow({ where: { id } });
    expect(moved.url).toBe("https://elsewhere.example.net/secured");
    expect(open(moved).oauth2.client_secret).toBe("second-secret");
  });
});
