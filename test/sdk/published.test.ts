import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";

// The package as it is published: dist/ built by its own build script, found through its
// package.json `exports`, as a project that installed it would find it.
type Sdk = typeof import("../../packages/sdk/src/index.ts");

const root = fileURLToPath(new URL("../..", import.meta.url));
const sdkDir = join(root, "packages", "sdk");
let gw: TestGateway;
let sdk: Sdk;

beforeAll(async () => {
  execFileSync("npm", ["run", "--silent", "build"], { cwd: sdkDir, stdio: "pipe" });
  const name = "@herald/sdk";
  sdk = (await import(/* @vite-ignore */ name)) as Sdk;
  gw = await startGateway();
}, 120_000);
afterAll(() => gw?.close());

describe("the built @herald/sdk", () => {
  it("works against a real gateway and verifies what it signs", async () => {
    const herald = new sdk.Herald({ apiKey: gw.key, baseUrl: gw.url });
    const app = await herald.apps.create({ name: "From dist" });
    expect((await herald.apps.retrieve(app.id)).name).toBe("From dist");
    await expect(herald.apps.retrieve("app_nope")).rejects.toBeInstanceOf(sdk.HeraldNotFoundError);
    const secret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"type":"a.b","timestamp":"2026-11-21T10:00:00.000Z","data":{}}';
    const headers = {
      "webhook-id": "evt_1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": sdk.signWebhook(secret, { id: "evt_1", timestamp, body }),
    };
    expect(sdk.verifyWebhook(secret, headers, body)).toEqual(JSON.parse(body));
  });

  it("loads in plain Node through its exports, with every export the sources have", async () => {
    const source = Object.keys(await import("../../packages/sdk/src/index.ts")).sort();
    const script = "import('@herald/sdk').then((m) => console.log(JSON.stringify(Object.keys(m).sort())))";
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual(source);
  });

  it("types a strict consumer through its declarations", () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-sdk-consumer-"));
    try {
      mkdirSync(join(dir, "node_modules", "@herald"), { recursive: true });
      symlinkSync(sdkDir, join(dir, "node_modules", "@herald", "sdk"));
      symlinkSync(join(root, "node_modules", "@types"), join(dir, "node_modules", "@types"));
      writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
      const compilerOptions = {
        strict: true,
        module: "NodeNext",
        noEmit: true,
        types: ["node"],
        skipLibCheck: false,
      };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
      writeFileSync(
        join(dir, "consumer.ts"),
        `import { Herald, HeraldApiError, verifyWebhook, type App, type Attempt } from "@herald/sdk";
const herald = new Herald({ apiKey: "hk_x" });
export async function use(): Promise<string> {
  const app: App = await herald.apps.create({ name: "A" });
  for await (const attempt of herald.attempts.list({ endpoint: "ep_1", limit: 10 })) {
    const status: Attempt["status"] = attempt.status;
  }
  const page = await herald.events.list({ app: app.id }).firstPage();
  const payload = verifyWebhook("whsec_x", new Headers(), "{}");
  // @ts-expect-error: a name is a string
  const wrong: number = app.name;
  return page.has_more ? payload.type : "";
}
export function codeOf(err: unknown): string | null {
  return err instanceof HeraldApiError ? err.code : null;
}
`,
      );
      const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
      execFileSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("packs dist and the README, not its sources or tests", () => {
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--silent"], {
      cwd: sdkDir,
      encoding: "utf8",
    });
    const files: string[] = JSON.parse(out)[0].files.map((f: { path: string }) => f.path);
    for (const needed of [
      "package.json",
      "README.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/generated/openapi.js",
    ])
      expect(files).toContain(needed);
    expect(files.filter((f) => !f.startsWith("dist/") && f !== "package.json" && f !== "README.md")).toEqual(
      [],
    );
  });
});
