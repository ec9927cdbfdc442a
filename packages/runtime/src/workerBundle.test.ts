import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { flagsWithoutTsx, workerBundle } from "./workerBundle.ts";

describe("a worker's bundle, for services run from source", () => {
  it("keeps the parent's Node flags a worker takes: not tsx's loader, nor V8's or the process's", () => {
    const tsx = "/repo/node_modules/.pnpm/tsx@4/node_modules/tsx/dist";
    expect(
      flagsWithoutTsx([
        "--max-old-space-size=160",
        "--require",
        `${tsx}/preflight.cjs`,
        "--import",
        `file://${tsx}/loader.mjs`,
        `--import=file://${tsx}/loader.mjs`,
        "--import",
        "./telemetry.mjs",
        "--enable-source-maps",
        "--stack-size=2000",
        "--title=herald",
      ]),
    ).toEqual(["--import", "./telemetry.mjs", "--enable-source-maps"]);
  });

  it("starts a worker with a service's own flags (service-node-flags.json)", async () => {
    const flags = JSON.parse(readFileSync(new URL("../service-node-flags.json", import.meta.url), "utf8"));
    const worker = new Worker("require('node:worker_threads').parentPort.postMessage('up')", {
      eval: true,
      execArgv: flagsWithoutTsx([...flags, "--enable-source-maps"]),
    });
    try {
      expect(
        await new Promise((resolve, reject) => worker.once("message", resolve).once("error", reject)),
      ).toBe("up");
    } finally {
      await worker.terminate();
    }
  });

  it("is one ES module plain Node runs: workspace code in it, third-party packages left to Node", async () => {
    const source = new URL("../../transform/src/worker.ts", import.meta.url);
    const bundle = workerBundle(source);
    expect(workerBundle(source)).toBe(bundle);
    const file = fileURLToPath(bundle);
    expect(file).toMatch(
      /packages\/transform\/node_modules\/\.cache\/herald-workers\/src_worker\.ts\.[0-9a-f]{16}\.mjs$/,
    );
    const code = readFileSync(file, "utf8");
    // Its own modules are inside; QuickJS is imported from the package, as from the source.
    expect(code).toContain("__herald_run");
    expect(code).toMatch(/from "quickjs-emscripten"/);
    expect(existsSync(file)).toBe(true);
    // It starts with no loader at all, and says it is ready.
    const worker = new Worker(bundle, {
      execArgv: [],
      workerData: { memoryBytes: 16 << 20, timeoutMs: 1000, cached: 4, heapBytes: 64 << 20 },
    });
    try {
      expect(
        await new Promise((resolve, reject) => worker.once("message", resolve).once("error", reject)),
      ).toBe("ready");
    } finally {
      await worker.terminate();
    }
  });
});
