import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type * as Pages from "../../services/api-gateway/src/pages.ts";

/**
 * The gateway finds the built pages next to its own source by default: also in a checkout
 * whose path has a space (a URL's `pathname` would read `%20` there).
 */
const repo = fileURLToPath(new URL("../..", import.meta.url));
const checkout = mkdtempSync(join(tmpdir(), "herald checkout "));
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

describe("the pages' default location", () => {
  it("is found in a checkout under a path with a space", async () => {
    const src = join(checkout, "services", "api-gateway", "src");
    mkdirSync(src, { recursive: true });
    cpSync(join(repo, "services/api-gateway/src/pages.ts"), join(src, "pages.ts"));
    symlinkSync(
      join(repo, "services/api-gateway/node_modules"),
      join(checkout, "services/api-gateway/node_modules"),
    );
    const dist = join(checkout, "packages", "web", "dist");
    mkdirSync(dist, { recursive: true });
    writeFileSync(join(dist, "portal.html"), "<!doctype html><title>Built portal</title>");

    const pages = await import(pathToFileURL(join(src, "pages.ts")).href);
    const fromGateway = createRequire(join(repo, "services/api-gateway/package.json"));
    const { default: express } = (await import(pathToFileURL(fromGateway.resolve("express")).href)) as {
      default: () => Parameters<typeof Pages.servePages>[0];
    };
    expect(pages.DEFAULT_WEB_DIST).toBe(dist);
    const app = express();
    pages.servePages(app, pages.DEFAULT_WEB_DIST);
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/portal`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("Built portal");
    } finally {
      server.close();
    }
  });
});
