import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/**
 * Accessibility checks with axe-core (WCAG 2.x A and AA rules: labels, names, contrast, ARIA,
 * landmarks) on the page as it is now. The script is evaluated through the DevTools protocol,
 * which the page's Content-Security-Policy does not govern, so the page itself stays strict.
 */
const source = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export type AxeViolation = { id: string; impact: string | null; help: string; targets: string[] };

export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(source);
  return page.evaluate(async () => {
    // This runs in the page: `globalThis` is its window (the tests' tsconfig has no DOM types).
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global the evaluated script defines
    const page = globalThis as any;
    const result = await page.axe.run(page.document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
    return result.violations.map(
      (v: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.map((n) => n.target.join(" ")),
      }),
    );
  });
}

export function describeViolations(violations: AxeViolation[]): string {
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.targets.join("\n  ")}`).join("\n");
}
