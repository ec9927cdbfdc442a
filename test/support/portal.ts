import { expect } from "vitest";
import { axeViolations, describeViolations } from "./axe.ts";
import type { WatchedPage } from "./browser.ts";
import type { TestGateway } from "./gateway.ts";

/** The portal tests' shared steps: a session link for an app, and a view kept and checked. */

/** A portal session link for `app` (its uid or id), as a customer would be handed it. */
export async function portalLink(
  gw: Pick<TestGateway, "url" | "request">,
  app: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await gw.request("POST", `/v3/apps/${app}/portal-sessions`, { json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return `${gw.url}/portal#token=${res.body.token}`;
}

/** A screenshot kept as an artifact, and the view checked against WCAG 2.1 A/AA rules. */
export async function checkView(watched: WatchedPage, name: string): Promise<void> {
  await watched.screenshot(name);
  const violations = await axeViolations(watched.page);
  expect(violations, `${name}:\n${describeViolations(violations)}`).toEqual([]);
}

/** Marks the document, so a later check proves the page changed without a reload. */
export async function markPage(watched: WatchedPage): Promise<() => Promise<boolean>> {
  await watched.page.evaluate(() => Object.assign(globalThis, { portalMark: true }));
  return () => watched.page.evaluate(() => "portalMark" in globalThis);
}
