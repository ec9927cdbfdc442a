#!/usr/bin/env node
// The `herald` command. Installed from the package, it runs the bundle in dist/. In the Herald
// repository (src/ beside it) it first rebuilds the bundle when a source is newer, so
// `npx herald` always runs the checkout's code.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/herald.mjs", import.meta.url);
if (existsSync(new URL("../src/main.ts", import.meta.url))) {
  const { buildIfStale } = await import("../scripts/build.mjs");
  await buildIfStale();
}
await import(bundle.href);
