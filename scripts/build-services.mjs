// `npm run build`: the production build of every image target (scripts/lib/images.json), as the
// Dockerfile runs it: `node scripts/build-services.mjs --out /out`.
//
// For each target it writes `<out>/<target>/`, the tree its image holds at /app:
//   package.json                     the third-party packages the bundle imports, with versions
//   node_modules/                    production dependencies only (`pnpm deploy --prod`, trimmed)
//   <service>/dist/main.mjs(.map)    one ESM bundle: the service, @herald/* and the Prisma client
//   <service>/dist/<worker>.mjs      one more for each worker thread it starts (images.json `workers`)
//   assets                           packages/web/dist (gateway), packages/db/migrations (migrate)
// Bundles sit where their sources did (src/ → dist/), so paths they resolve from their own
// location (the pages, the migrations) hold in the image as in the repository.
// Run with `node --enable-source-maps <flags> <bundle>` from `<out>/<target>`; nothing needs tsx.
//
//   node scripts/build-services.mjs [--out dist] [target…]
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";
import { packageName, prune, reachable } from "./lib/prune.mjs";
import { ensureDependencies, ensureWebBuilt, pnpmCommand, root, say } from "./lib/setup.mjs";

const IMAGES = JSON.parse(readFileSync(join(root, "scripts", "lib", "images.json"), "utf8"));

const args = process.argv.slice(2);
const outFlag = args.indexOf("--out");
const out = resolve(root, outFlag >= 0 ? args[outFlag + 1] : "dist");
const asked = args.filter((a, i) => !a.startsWith("--") && !(outFlag >= 0 && i === outFlag + 1));
const targets = asked.length ? asked : Object.keys(IMAGES);
for (const target of targets) {
  if (!IMAGES[target]) {
    console.error(`unknown target ${target}; targets: ${Object.keys(IMAGES).join(", ")}`);
    process.exit(2);
  }
}

/**
 * Bundled: workspace code (@herald/*) and the Prisma client, both the generated part and the
 * runtime it was generated for (@prisma/client/runtime: no dependencies, and only its
 * PostgreSQL query compiler is imported, where the package ships one per database, 74 MB).
 * Every other package stays external, installed in node_modules.
 */
const BUNDLED = [/^@herald\//, /^@prisma\/client\/runtime\//];
const thirdPartyExternal = {
  name: "third-party-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (a) =>
      BUNDLED.some((re) => re.test(a.path)) || isBuiltin(a.path)
        ? undefined
        : { path: a.path, external: true },
    );
  },
};

/** One entry point to one bundle; returns the third-party packages it imports. */
async function bundleOne(entry, outfile) {
  const result = await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    logLevel: "warning",
    plugins: [thirdPartyExternal],
    // The Prisma runtime Node picks is CommonJS: its require() calls need a real require.
    banner: {
      js: 'import { createRequire as __herald_createRequire } from "node:module";\nconst require = __herald_createRequire(import.meta.url);',
    },
  });
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports);
  return imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => packageName(i.path));
}

/** The service's bundle and its worker threads' (each started from a file of its own). */
async function bundle(image, dir) {
  const entries = [{ entry: image.entry, bundle: image.bundle }, ...(image.workers ?? [])];
  const imports = [];
  for (const { entry, bundle } of entries) imports.push(...(await bundleOne(entry, join(dir, bundle))));
  return [...new Set(imports)].sort();
}

function deployProductionDependencies(image, dir) {
  const staging = join(dir, ".deploy");
  const [cmd, ...pre] = pnpmCommand();
  // inject-workspace-packages: pnpm 10's deploy reads the workspace lockfile only with it.
  // hoisted: one flat node_modules, found by Node from the bundle whatever imports what.
  const result = spawnSync(
    cmd,
    [
      ...pre,
      `--filter=${image.package}`,
      "deploy",
      "--prod",
      "--offline",
      "--ignore-scripts",
      "--config.inject-workspace-packages=true",
      "--config.node-linker=hoisted",
      staging,
    ],
    { cwd: root, encoding: "utf8" },
  );
  if (result.status !== 0) {
    throw new Error(`pnpm deploy ${image.package} failed:\n${result.stdout}${result.stderr}`);
  }
  renameSync(join(staging, "node_modules"), join(dir, "node_modules"));
  rmSync(staging, { recursive: true, force: true });
}

async function buildTarget(name) {
  const image = IMAGES[name];
  const dir = join(out, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const imports = await bundle(image, dir);
  deployProductionDependencies(image, dir);
  const { keep, direct } = reachable(dir, imports);
  prune(dir, keep);
  for (const asset of image.assets) {
    if (!existsSync(join(root, asset))) throw new Error(`${asset} is missing: build it first`);
    mkdirSync(dirname(join(dir, asset)), { recursive: true });
    cpSync(join(root, asset), join(dir, asset), { recursive: true });
  }
  const dependencies = Object.fromEntries(Object.entries(direct).sort(([a], [b]) => (a < b ? -1 : 1)));
  const manifest = { name: `herald-${name}`, private: true, type: "module", dependencies };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  say(`${name}: ${image.bundle}, ${keep.size} production packages → ${dir}`);
}

ensureDependencies();
if (targets.some((t) => IMAGES[t].assets.includes("packages/web/dist"))) ensureWebBuilt();
for (const target of targets) await buildTarget(target);
