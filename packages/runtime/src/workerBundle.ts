import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * A worker thread's TypeScript source as one ES module plain Node runs, for services run from
 * source (`npm start`, the tests, the lean benchmark). Started through tsx instead, each worker
 * held its own loader thread and compiled every module again: about 30 MB more a worker,
 * measured, where a QuickJS worker needs 14. Built once per source and process with esbuild
 * (as scripts/build-services.mjs builds the images' worker bundles): workspace code (@herald/*
 * and relative imports) bundled, third-party packages left to Node, which resolves them from
 * the bundle's place in the source's package (`node_modules/.cache/herald-workers/`), as it
 * would from the source. Named by content, so processes share a build and none sees another's
 * half written.
 */
const built = new Map<string, URL>();

export function workerBundle(source: URL): URL {
  const path = fileURLToPath(source);
  let bundle = built.get(path);
  if (!bundle) {
    bundle = build(path);
    built.set(path, bundle);
  }
  return bundle;
}

function build(path: string): URL {
  const root = packageRoot(path);
  // Required here, not imported: esbuild is a development tool, absent from the images.
  const esbuild = createRequire(import.meta.url)("esbuild") as typeof import("esbuild");
  const external = thirdParty(root).flatMap((name) => [name, `${name}/*`]);
  const result = esbuild.buildSync({
    entryPoints: [path],
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "inline",
    logLevel: "silent",
    external,
  });
  const code = result.outputFiles[0]!.contents;
  const dir = join(root, "node_modules", ".cache", "herald-workers");
  const name = `${path.slice(root.length + 1).replace(/[/\\]/g, "_")}.${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`;
  const file = join(dir, name);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, file);
  }
  return pathToFileURL(file);
}

/** The directory of the package.json nearest above `path`. */
function packageRoot(path: string): string {
  let dir = dirname(path);
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${path}`);
    dir = up;
  }
  return dir;
}

/**
 * The third-party packages the package at `root` and the workspace packages it depends on
 * (@herald/*, followed through its node_modules) may import, that Node finds from `root`: those
 * stay external. One only a workspace package depends on is bundled (esbuild finds it from
 * there; Node would not from the bundle).
 */
function thirdParty(root: string, from = root, seen = new Set<string>()): string[] {
  if (seen.has(from)) return [];
  seen.add(from);
  const manifest = JSON.parse(readFileSync(join(from, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const names: string[] = [];
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (name.startsWith("@herald/")) names.push(...thirdParty(root, join(from, "node_modules", name), seen));
    else if (existsSync(join(root, "node_modules", name))) names.push(name);
  }
  return [...new Set(names)];
}

/**
 * The parent's Node flags a worker takes: module loading (`--import`, `--require`,
 * `--conditions`), warnings, source maps and experimental features, but tsx's loader (which a
 * bundle does not need, and which would start a loader thread in the worker again). V8's and
 * the process's options (`--max-old-space-size`, `--stack-size`, `--title`…) are refused in a
 * worker, whose heap its resourceLimits set.
 */
export function flagsWithoutTsx(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    const takesValue = /^(--require|--import|--loader|--experimental-loader|--conditions|-r|-C)$/.test(flag);
    const value = takesValue ? (execArgv[i + 1] ?? "") : flag;
    if (takesValue) i++;
    if (/[/\\]tsx[/\\]|^tsx$/.test(value)) continue;
    const name = flag.split("=")[0]!;
    const workerSafe =
      takesValue ||
      /^--(import|require|conditions|enable-source-maps|no-warnings|disable-warning|(no-)?experimental-[\w-]+)$/.test(
        name,
      );
    if (!workerSafe) continue;
    kept.push(...(takesValue ? [flag, value] : [flag]));
  }
  return kept;
}
