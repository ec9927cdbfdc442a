import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Express, type Request, type Response } from "express";

/**
 * The portal and the dashboard: pages built by packages/web (Vite) and served from here, the
 * one public HTTP surface. Each page is one HTML file for every path under it (the pages route
 * in the browser); assets have hashed names and are cached for good. Nothing comes from
 * another origin, and the policy below lets nothing else run.
 */
export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// fileURLToPath, not `.pathname`: a checkout under a path with a space would read `%20`.
export const DEFAULT_WEB_DIST = fileURLToPath(new URL("../../../packages/web/dist", import.meta.url));

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Herald</title></head><body>
<h1>The pages are not built</h1><p>Build them with <code>pnpm --filter @herald/web build</code>
(<code>npm start</code> and <code>npm test</code> do this for you), then reload.</p></body></html>`;

export function servePages(app: Express, dist: string): void {
  app.use(
    "/ui/assets",
    express.static(join(dist, "assets"), {
      immutable: true,
      maxAge: "365d",
      index: false,
      fallthrough: true,
    }),
  );
  for (const name of ["portal", "dashboard"] as const) {
    // Read on each load (a few hundred bytes): a rebuild's new asset names apply without a restart.
    const send = async (_req: Request, res: Response) => {
      const html = await readFile(join(dist, `${name}.html`), "utf8").catch(() => null);
      res.set({ "Content-Security-Policy": APP_CSP, "Cache-Control": "no-store" });
      res
        .status(html ? 200 : 503)
        .type("html")
        .send(html ?? NOT_BUILT);
    };
    app.get(`/${name}`, send);
    app.get(`/${name}/*rest`, send);
  }
  app.get("/", (_req, res) => {
    res.redirect(302, "/dashboard");
  });
}
