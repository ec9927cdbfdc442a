// Bundles the CLI, the SDK's source and ws included, into dist/herald.mjs: one file with no
// dependencies, so the package installs anywhere (`npm install -g`) with nothing to fetch.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { fileURLToPath } from "node:url";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here("../dist/herald.mjs");
const { version } = JSON.parse(readFileSync(here("../package.json"), "utf8"));

/** The newest modification time under the CLI's and the SDK's sources. */
function newestSource() {
  let newest = statSync(here("../package.json")).mtimeMs;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of ["../src", "../../sdk/src"]) walk(here(dir));
  return Math.max(newest, statSync(here("build.mjs")).mtimeMs);
}

export async function build() {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    write: false,
    entryPoints: [here("../src/main.ts")],
    outfile: out,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The SDK from source: its dist/ need not be built first.
    alias: { "@herald/sdk": here("../../sdk/src/index.ts") },
    // ws's optional native speed-ups: required inside a try, absent is fine.
    external: ["bufferutil", "utf-8-validate"],
    define: { HERALD_CLI_VERSION: JSON.stringify(version) },
    // ws is CommonJS and requires Node's modules: give the ESM bundle a `require`.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: "warning",
  });
  // Written aside, then renamed: a `herald` started meanwhile never runs half a file.
  mkdirSync(here("../dist"), { recursive: true });
  const temp = `${out}.${process.pid}.tmp`;
  writeFileSync(temp, result.outputFiles[0].contents);
  renameSync(temp, out);
}

export async function buildIfStale() {
  if (existsSync(out) && statSync(out).mtimeMs >= newestSource()) return;
  await build();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
