import { defineConfig } from "vite";

/**
 * Two pages, one bundle each, served by the api-gateway: /portal (one app, for a customer)
 * and /dashboard (the account holder). Assets live under /ui/ with hashed names, so the
 * gateway serves them as immutable. No inline scripts or styles: the pages run under a
 * Content-Security-Policy of `script-src 'self'; style-src 'self'`.
 */
export default defineConfig({
  base: "/ui/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    rollupOptions: { input: { portal: "portal.html", dashboard: "dashboard.html" } },
  },
});
