import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";
import { axeViolations, describeViolations } from "./axe.ts";
import { openPage, type WatchedPage } from "./browser.ts";

/** The dashboard tests' shared steps: signing in with a key, and the checks every view gets. */

/** For what the pages show after a refresh: they poll every 5 to 10 s (packages/web/src/ui/poll.ts). */
export const REFRESHED = { timeout: 25_000 };

/** A page signed in through the form with an API key, on the overview. */
export async function signedIn(
  browser: Browser,
  url: string,
  key: string,
): Promise<{ watched: WatchedPage; page: Page; sections: ReturnType<Page["getByRole"]> }> {
  const watched = await openPage(browser);
  const { page } = watched;
  page.setDefaultTimeout(15_000);
  await page.goto(`${url}/dashboard`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  return { watched, page, sections: page.getByRole("navigation", { name: "Sections", exact: true }) };
}

/** The view checked against WCAG 2.1 A/AA rules. */
export async function expectAccessible(page: Page): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations, describeViolations(violations)).toEqual([]);
}
