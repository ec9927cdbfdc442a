// Trims a production node_modules (hoisted layout, as `pnpm deploy --config.node-linker=hoisted`
// writes it) down to what a bundle imports and what those packages need at run time.
// `pnpm deploy --prod` alone also brings in optional peers it resolved in the workspace:
// @prisma/client's `prisma` and `typescript`, the CLI and the compiler, which nothing runs.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
export function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Node's lookup: `<dir>/node_modules/<name>` from `from` upwards, stopping at `top`. */
function locate(name, from, top) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === top || dir === dirname(dir)) return null;
  }
}

/**
 * The package folders reachable from `imports` (package names the bundle imports) through
 * `dependencies`, `optionalDependencies` (when installed) and required `peerDependencies`.
 * Returns the folder and version of each package the bundle imports directly, too.
 */
export function reachable(top, imports) {
  const keep = new Set();
  const direct = {};
  const queue = imports.map((name) => ({ name, from: top, optional: false, by: "the bundle" }));
  while (queue.length) {
    const { name, from, optional, by } = queue.pop();
    const dir = locate(name, from, top);
    if (!dir) {
      if (optional) continue;
      throw new Error(`${name}, needed by ${by}, is not in ${join(top, "node_modules")}`);
    }
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    if (by === "the bundle") direct[name] = pkg.version;
    if (keep.has(dir)) continue;
    keep.add(dir);
    const peersMeta = pkg.peerDependenciesMeta ?? {};
    const needs = [
      ...Object.keys(pkg.dependencies ?? {}).map((n) => [n, false]),
      ...Object.keys(pkg.optionalDependencies ?? {}).map((n) => [n, true]),
      // An optional peer is the importer's choice: the bundle imports it itself if it uses it.
      ...Object.keys(pkg.peerDependencies ?? {})
        .filter((n) => !peersMeta[n]?.optional)
        .map((n) => [n, false]),
    ];
    for (const [dep, isOptional] of needs)
      queue.push({ name: dep, from: dir, optional: isOptional, by: name });
  }
  return { keep, direct };
}

/** Removes every package folder under `<top>/node_modules` (nested ones too) not in `keep`. */
export function prune(top, keep) {
  const removed = [];
  const sweep = (modules) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      const path = join(modules, entry);
      // .bin, .pnpm, .modules.yaml, lockfiles: install bookkeeping, nothing runs them.
      if (entry.startsWith(".")) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      const dirs = entry.startsWith("@") ? readdirSync(path).map((n) => join(path, n)) : [path];
      for (const dir of dirs) {
        if (keep.has(dir)) sweep(join(dir, "node_modules"));
        else {
          rmSync(dir, { recursive: true, force: true });
          removed.push(dir.slice(modules.length + 1));
        }
      }
      if (entry.startsWith("@") && readdirSync(path).length === 0) rmSync(path, { recursive: true });
    }
  };
  sweep(join(top, "node_modules"));
  return removed;
}
