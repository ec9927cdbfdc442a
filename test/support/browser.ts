import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/**
 * Debian's Chromium driven by playwright-core, headless. Every page records console errors,
 * uncaught exceptions and failed requests; `expectClean()` fails the test on any of them.
 * Screenshots go to test-artifacts/screenshots/ (kept by CI as the run's artifacts).
 */
export const SCREENSHOTS = join(
  fileURLToPath(new URL("../..", import.meta.url)),
  "test-artifacts",
  "screenshots",
);

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
  /** Console errors, page errors, CSP violations, failed requests and dialogs seen so far. */
  problems: string[];
  /**
   * Throws when the page logged an error, threw, or broke its Content-Security-Policy.
   * `allow` lists the problems a test caused on purpose (a 404 it asked for).
   */
  expectClean(allow?: RegExp[]): void;
  /**
   * Right after a step that causes problems on purpose (the 400 for a bad field): each pattern
   * matches one of them and nothing else is there. They are then forgotten, so a later
   * expectClean() judges only what came after.
   */
  expectOnly(expected: RegExp[]): void;
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
  // Chromium reports CSP violations (an inline script or style, a foreign image or connection)
  // as console errors, and a failed load with the resource's URL, which the line names.
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const at = msg.location().url;
    problems.push(`console.error: ${msg.text()}${at ? ` (at ${at})` : ""}`);
  });
  page.on("pageerror", (err) => problems.push(`uncaught: ${err.message}`));
  // A request that got no answer (refused, reset, blocked by the CSP). One aborted is not a
  // problem: a navigation or a newer poll of the page cancelled it.
  page.on("requestfailed", (request) => {
    const reason = request.failure()?.errorText ?? "failed";
    if (reason === "net::ERR_ABORTED") return;
    problems.push(`request failed: ${request.method()} ${request.url()} (${reason})`);
  });
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
    expectOnly(expected) {
      const unexpected = problems.filter((p) => !expected.some((re) => re.test(p)));
      const missing = expected.filter((re) => !problems.some((p) => re.test(p)));
      if (unexpected.length || missing.length)
        throw new Error(
          `The page's problems were not those expected.\nUnexpected:\n${unexpected.join("\n")}\nMissing: ${missing.join(", ")}`,
        );
      problems.length = 0;
    },
    async screenshot(name: string) {
      const path = join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    close: () => context.close(),
  };
}
