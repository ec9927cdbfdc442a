import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { cliEnv, herald } from "./cli.ts";

/**
 * The CLI as users get it: from the repository root (`pnpm exec herald`, `npx herald`), and as a
 * package installed globally, one bundled file with no dependency to fetch.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
let gw: TestGateway;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  gw = await startGateway();
  await gw.request("POST", "/v3/apps", { json: { uid: "installed", name: "installed" } });
  env = cliEnv({ HERALD_URL: gw.url, HERALD_API_KEY: gw.key });
});
afterAll(async () => {
  await gw?.close();
});

describe("installing herald", () => {
  it("runs from the repository root through the workspace's bin", async () => {
    const bin = join(root, "node_modules", ".bin", "herald");
    const version = await herald(["--version"], env, undefined, bin);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^herald \d+\.\d+\.\d+/);
    // The gateway answers in this process: the CLI runs beside it, never blocking it.
    const apps = await herald(["apps", "list", "--json"], env, undefined, bin);
    expect(apps.code, apps.stderr).toBe(0);
    expect(JSON.parse(apps.stdout).map((a: { uid: string }) => a.uid)).toContain("installed");
  });

  it("packs into one bundled file that installs globally offline and runs", {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-cli-pack-"));
    // prepack builds the bundle.
    execFileSync("npm", ["pack", "--pack-destination", dir, "./packages/cli"], { cwd: root, stdio: "pipe" });
    const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz"))!;
    const files = execFileSync("tar", ["tzf", join(dir, tarball)], { encoding: "utf8" })
      .trim()
      .split("\n")
      .sort();
    expect(files).toEqual([
      "package/README.md",
      "package/bin/herald.mjs",
      "package/dist/herald.mjs",
      "package/package.json",
    ]);
    const prefix = join(dir, "global");
    execFileSync("npm", ["install", "--global", "--offline", "--prefix", prefix, join(dir, tarball)], {
      stdio: "pipe",
    });
    // Nothing came with it: ws and the SDK are inside the bundle.
    expect(readdirSync(join(prefix, "lib", "node_modules", "@herald", "cli"))).not.toContain("node_modules");
    const bin = join(prefix, "bin", "herald");
    const apps = await herald(["apps", "show", "installed", "--json"], env, undefined, bin);
    expect(apps.code, apps.stderr).toBe(0);
    expect(JSON.parse(apps.stdout).uid).toBe("installed");
  });
});
