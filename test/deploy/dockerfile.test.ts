import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import SERVICE_NODE_FLAGS from "@herald/runtime/service-node-flags.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import {
  baseImage,
  effective,
  envOf,
  IMAGES,
  type ImageTarget,
  parseDockerfile,
  root,
  setting,
} from "../support/dockerfile.ts";

/**
 * The Dockerfile, read statically (no Docker engine here): pinned base, one stage per process
 * running its bundle with plain `node` under tini as a numeric non-root user, production
 * dependencies only; and a build context holding what the build copies and nothing else.
 * That the bundles and their node_modules run is test/deploy/bundles.test.ts's part.
 */
const stages = parseDockerfile();
const TARGETS = Object.keys(IMAGES) as ImageTarget[];

describe("Dockerfile", () => {
  it("starts every stage from one Node LTS image pinned to an exact version", () => {
    const roots = stages.filter((s) => !stages.some((o) => o.name === s.from)).map((s) => s.from);
    expect(new Set(roots).size).toBe(1);
    const [, major] = /^node:((\d+)\.\d+\.\d+)-bookworm-slim$/.exec(roots[0]!)?.slice(1) ?? [];
    expect(roots[0], "node:<major>.<minor>.<patch>-bookworm-slim").toMatch(
      /^node:\d+\.\d+\.\d+-bookworm-slim$/,
    );
    // An LTS line (even major) still supported (Node 20's support ended in April 2026), and
    // one the project's engines allow: the bundles target the oldest of them.
    expect(Number(major) % 2).toBe(0);
    expect(Number(major)).toBeGreaterThanOrEqual(22);
    const engines = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node as string;
    expect(Number(major)).toBeGreaterThanOrEqual(Number(/\d+/.exec(engines)![0]));
  });

  it("has one stage per image target, each running its bundle with plain node", () => {
    expect(stages.map((s) => s.name)).toEqual(expect.arrayContaining(TARGETS));
    for (const target of TARGETS) {
      const own = stages.find((s) => s.name === target)!.instructions;
      expect(
        own.filter((i) => i.op === "COPY").map((i) => i.args),
        target,
      ).toEqual([`--from=build /out/${target} /app`]);
      expect(setting(stages, target, "WORKDIR"), target).toBe("/app");
      expect(setting(stages, target, "CMD"), target).toEqual([
        "node",
        "--enable-source-maps",
        ...SERVICE_NODE_FLAGS,
        IMAGES[target].bundle,
      ]);
      expect(setting(stages, target, "EXPOSE"), target).toBe(IMAGES[target].port?.toString());
    }
  });

  it("runs as a numeric non-root user, under tini, in production mode, with no HEALTHCHECK", () => {
    for (const target of TARGETS) {
      const user = String(setting(stages, target, "USER"));
      expect(user, target).toMatch(/^\d+:\d+$/);
      expect(Number(user.split(":")[0]), target).toBeGreaterThan(0);
      // tini is PID 1: it passes SIGTERM to node and reaps; node then stops gracefully.
      expect(setting(stages, target, "ENTRYPOINT"), target).toEqual(["/usr/bin/tini", "--"]);
      const runs = effective(stages, target).filter((i) => i.op === "RUN");
      expect(
        runs.some((i) => /apt-get install .*\btini\b/.test(i.args)),
        target,
      ).toBe(true);
      expect(envOf(stages, target).NODE_ENV, target).toBe("production");
      expect(
        effective(stages, target).some((i) => i.op === "HEALTHCHECK"),
        target,
      ).toBe(false);
    }
  });

  it("installs nothing in the images: dependencies come built from the build stage", () => {
    for (const target of TARGETS) {
      const runs = effective(stages, target).filter((i) => i.op === "RUN");
      expect(
        runs.filter((i) => /\b(pnpm|npm|yarn)\b.*\b(install|add|ci)\b/.test(i.args)),
        target,
      ).toEqual([]);
      expect(baseImage(stages, target)).toBe(baseImage(stages, "build"));
    }
  });

  it("installs from every workspace manifest and the lockfile, then builds with the build script", () => {
    const build = stages.find((s) => s.name === "build")!.instructions;
    const installAt = build.findIndex((i) => i.op === "RUN" && /pnpm install --frozen-lockfile/.test(i.args));
    expect(installAt).toBeGreaterThan(0);
    const copiedBefore = build
      .slice(0, installAt)
      .filter((i) => i.op === "COPY")
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    const manifests = ["packages", "services"].flatMap((dir) =>
      readdirSync(join(root, dir))
        .filter((name) => existsSync(join(root, dir, name, "package.json")))
        .map((name) => `${dir}/${name}/package.json`),
    );
    expect(copiedBefore).toEqual(
      expect.arrayContaining(["package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml", ...manifests]),
    );
    expect(
      build
        .slice(installAt)
        .some((i) => i.op === "RUN" && i.args === "node scripts/build-services.mjs --out /out"),
    ).toBe(true);
  });
});

/** Docker's .dockerignore matching: the last pattern that matches a path or a parent decides. */
function ignored(patterns: string[], path: string): boolean {
  const toRegex = (p: string) =>
    new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*\*\/?/g, "%GLOBSTAR%")
        .replace(/\*/g, "[^/]*")
        .replace(/\?/g, "[^/]")
        .replace(/%GLOBSTAR%/g, "(.*/)?")}$`,
    );
  const parts = path.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let result = false;
  for (const raw of patterns) {
    const negate = raw.startsWith("!");
    const re = toRegex(negate ? raw.slice(1) : raw);
    if (prefixes.some((p) => re.test(p))) result = !negate;
  }
  return result;
}

describe(".dockerignore", () => {
  const patterns = readFileSync(join(root, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));

  it("keeps in the build context what the build stage copies", () => {
    const copied = stages
      .find((s) => s.name === "build")!
      .instructions.filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const path of [
      ...copied,
      "scripts/build-services.mjs",
      "scripts/lib/images.json",
      "packages/db/migrations/0001_init.sql",
      "packages/db/prisma/schema.prisma",
      "packages/web/dashboard.html",
      "services/sender/src/main.ts",
    ]) {
      expect(existsSync(join(root, path)), path).toBe(true);
      expect(ignored(patterns, path), path).toBe(false);
    }
  });

  it("leaves out what is installed, generated or built on the host, and everything else", () => {
    for (const path of [
      "node_modules/pg/package.json",
      "packages/db/node_modules/pg/package.json",
      "packages/db/src/generated/client.ts",
      "packages/web/dist/dashboard.html",
      "services/sender/dist/main.mjs",
      "dist/sender/package.json",
      ".git/HEAD",
      ".herald/local.json",
      ".env",
      "test-artifacts/shot.png",
      "bench-results/latest.json",
      "test/api/apps.test.ts",
      "deploy/base/kustomization.yaml",
      "Dockerfile",
      "npm-debug.log",
    ]) {
      expect(ignored(patterns, path), path).toBe(true);
    }
  });
});
