import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "./support/dockerfile.ts";

/**
 * The README, CONTRIBUTING.md and the pages in docs/ name files, and link to each other's
 * headings. Files move; these checks name the page to fix when one does: every relative link
 * leads to a file (and heading) of the repository, every repository path written in backticks
 * (`services/…/x.ts`, `packages/…`) exists, and so does every docs page (and heading) the
 * code's comments send a reader to.
 */
const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" });

/** Files of the checkout (tracked, or new and not ignored), and the folders holding them. */
const files = new Set(git("ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0"));
files.delete("");
const folders = new Set(
  [...files].flatMap((f) => {
    const parts = f.split("/");
    return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join("/"));
  }),
);
const exists = (path: string) => files.has(path) || folders.has(path);
/** What the build makes (git-ignored: `packages/web/dist`, …) is named without being in the repository. */
function ignored(path: string): boolean {
  try {
    git("check-ignore", "-q", "--no-index", path);
    return true;
  } catch {
    return false;
  }
}

const pages = [
  "README.md",
  "CONTRIBUTING.md",
  ...[...files].filter((f) => /^docs\/[^/]+\.md$/.test(f)).sort(),
];
/** Other Markdown whose links point into the pages above. */
const linking = ["deploy/README.md", "packages/cli/README.md", "packages/sdk/README.md"];
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** The text outside fenced code blocks: what renders as prose, links and headings. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, "");
}

/** GitHub's anchors for a page's headings (`## Isolation: one …` is `#isolation-one-…`). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text = ""] of prose(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = text
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Each relative link of a page: `[text](path#anchor)`, `[text](#anchor)`. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(page: string): string[] {
  return links(read(page)).flatMap((target) => {
    const [path = "", anchor] = target.split("#");
    const file = path ? normalize(join(dirname(page), decodeURIComponent(path))).replace(/\/$/, "") : page;
    if (!exists(file)) return [`${target}: no ${file}`];
    if (anchor && file.endsWith(".md") && !anchors(read(file)).has(anchor))
      return [`${target}: no heading #${anchor} in ${file}`];
    return [];
  });
}

/** Paths in backticks that start at a top-level folder of the repository. */
const topLevel = new Set([...folders].filter((f) => !f.includes("/")));
function namedPaths(markdown: string): string[] {
  return [...prose(markdown).matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1]!.replace(/\/$/, ""))
    .filter((p) => p.includes("/") && topLevel.has(p.split("/")[0]!) && !/[<>*…{}$]/.test(p));
}

describe("the README, CONTRIBUTING.md and docs/", () => {
  it("are the pages expected, each linked from the README", () => {
    expect(pages.length).toBeGreaterThan(5);
    const readmeLinks = new Set(links(read("README.md")).map((l) => l.split("#")[0]));
    expect(pages.filter((p) => p !== "README.md" && !readmeLinks.has(p))).toEqual([]);
  });

  it.each([...pages, ...linking])(
    "%s: every relative link leads to a file and heading that exist",
    (page) => {
      expect(brokenLinks(page)).toEqual([]);
    },
  );

  it.each(pages)("%s: every repository path named in backticks exists", (page) => {
    const named = namedPaths(read(page));
    expect(named.filter((p) => !exists(p) && !ignored(p))).toEqual([]);
  });

  it("name some repository paths, so the check above checks something", () => {
    expect(namedPaths(read("docs/architecture.md")).length).toBeGreaterThan(15);
  });

  it("exist wherever the code sends a reader to them, with the heading named", () => {
    const sources = [...files].filter(
      (f) =>
        /^(services|packages|scripts|test|deploy)\//.test(f) && /\.(ts|tsx|mjs|yaml|yml|env|prisma)$/.test(f),
    );
    const missing = sources.flatMap((source) =>
      [...read(source).matchAll(/\b((?:docs\/[\w-]+|CONTRIBUTING)\.md)(?:, "([^"]+)")?/g)].flatMap(
        ([, page = "", heading]) => {
          if (!exists(page)) return [`${source}: ${page}`];
          const slug = heading
            ?.toLowerCase()
            .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
            .replace(/ /g, "-");
          if (slug && ![...anchors(read(page))].some((a) => a.startsWith(slug)))
            return [`${source}: ${page}, "${heading}"`];
          return [];
        },
      ),
    );
    expect(missing).toEqual([]);
  });
});
