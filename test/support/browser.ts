import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/**
 * Debian's Chromium driven by playwright-core, headless. Every page records console errors,
 * uncaught exceptions and failed requests; `expectClean()` fails the test on any of them.
 * Screenshots go to test-artifacts/screenshots/ (kept by CI as the run's artifacts).
 */
export const SCREENSHOTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "screenshots");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: FLAGS, headless: true });
}

export type WatchedPage = {
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors, and CSP violations seen so far. */
  problems: string[];
  /**
   * Throws when the page logged an error, threw, or broke its Content-Security-Policy.
   * `allow` lists the problems a test caused on purpose (a 404 it asked for).
   */
  expectClean(allow?: RegExp[]): void;
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
};

export async function openPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    timezoneId: "Europe/Paris",
    locale: "en-GB",
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console.error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`uncaught: ${err.message}`));
  // Dialogs would mean a script ran where none should (an alert from injected markup).
  page.on("dialog", (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    page,
    context,
    problems,
    expectClean(allow = []) {
      const left = problems.filter((p) => !allow.some((re) => re.test(p)));
      if (left.length) throw new Error(`The page had problems:\n${left.join("\n")}`);
    },
    async screenshot(name: string) {
      const path = join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    close: () => context.close(),
  };
}
