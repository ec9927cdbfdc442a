import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient } from "../support/apiClient.ts";
import { IMAGES, type ImageTarget, parseDockerfile, root, setting } from "../support/dockerfile.ts";
import { AMQP_URL, databaseUrl, PG_URL, RUN_ID } from "../support/env.ts";
import { createQueuePrefix } from "../support/isolation.ts";
import { freePort, type NodeProcess, runNode } from "../support/processes.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";

/**
 * What the images hold, run without Docker: `scripts/build-services.mjs` lays out each image's
 * /app as the Dockerfile copies it; each bundle then runs with the Dockerfile's own command,
 * plain `node` (no tsx), a bare environment and only that tree's production node_modules,
 * against the local PostgreSQL (a database of its own) and RabbitMQ (a queue prefix of its own).
 */
const TARGETS = Object.keys(IMAGES) as ImageTarget[];
const stages = parseDockerfile();
const out = mkdtempSync(join(tmpdir(), "herald-images-"));
const dbName = `herald_t_${RUN_ID}_images`;
const queues = createQueuePrefix();
let receiver: Receiver;

type Running = {
  target: ImageTarget;
} & NodeProcess;

/** Runs a target as its image would: the Dockerfile's CMD, from /app (here `<out>/<target>`). */
function run(target: ImageTarget, env: Record<string, string>): Running {
  const [node, ...args] = setting(stages, target, "CMD") as string[];
  expect(node).toBe("node");
  const started = runNode(args, {
    cwd: join(out, target),
    // Nothing from this test process (no NODE_OPTIONS, no loader): the image's ENV and the service's.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NODE_ENV: "production", LOG_LEVEL: "info", ...env },
  });
  return { target, ...started };
}

async function ready(url: string, service: Running): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (service.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`${service.target} is not ready at ${url}:\n${service.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every package folder under a node_modules tree (nested ones too), with its package.json. */
function installed(dir: string): { name: string; deps: string[] }[] {
  const found: { name: string; deps: string[] }[] = [];
  const modules = join(dir, "node_modules");
  if (!existsSync(modules)) return found;
  for (const entry of readdirSync(modules)) {
    const dirs = entry.startsWith("@")
      ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`)
      : [entry];
    for (const name of dirs) {
      const pkg = JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8"));
      found.push({
        name,
        deps: Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies }),
      });
      found.push(...installed(join(modules, name)));
    }
  }
  return found;
}

const manifests = [
  "package.json",
  ...["packages", "services"].flatMap((d) =>
    readdirSync(join(root, d))
      .map((n) => `${d}/${n}/package.json`)
      .filter((p) => existsSync(join(root, p))),
  ),
].map((p) => JSON.parse(readFileSync(join(root, p), "utf8")));

beforeAll(async () => {
  const build = spawnSync(process.execPath, ["scripts/build-services.mjs", "--out", out], {
    cwd: root,
    encoding: "utf8",
  });
  if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await queues.remove([1000]).catch(() => {});
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  rmSync(out, { recursive: true, force: true });
});

describe("the image contents", () => {
  it("hold production dependencies only: no tsx, TypeScript, test or build tools, no workspace sources", () => {
    const prod = new Set(manifests.flatMap((m) => Object.keys(m.dependencies ?? {})));
    const devOnly = new Set(
      manifests.flatMap((m) => Object.keys(m.devDependencies ?? {})).filter((n) => !prod.has(n)),
    );
    // Resolution cannot reach past the tree: no node_modules above it.
    for (let dir = dirname(out); dir !== dirname(dir); dir = dirname(dir)) {
      expect(existsSync(join(dir, "node_modules")), dir).toBe(false);
    }
    for (const target of TARGETS) {
      const packages = installed(join(out, target));
      const names = new Set(packages.map((p) => p.name));
      for (const tool of ["tsx", "typescript", "vitest", "esbuild", "vite", "prisma", "@biomejs/biome"]) {
        expect(names.has(tool), `${target} holds ${tool}`).toBe(false);
      }
      expect(
        [...names].filter((n) => n.startsWith("@herald/")),
        target,
      ).toEqual([]);
      // A package that is only a dev dependency here is there only if a production one needs it.
      const needed = new Set(packages.flatMap((p) => p.deps));
      expect(
        [...names].filter((n) => devOnly.has(n) && !needed.has(n)),
        target,
      ).toEqual([]);
      // What the bundle imports is what the workspace's packages depend on in production.
      const manifest = JSON.parse(readFileSync(join(out, target, "package.json"), "utf8"));
      for (const dep of Object.keys(manifest.dependencies))
        expect(prod.has(dep), `${target}: ${dep}`).toBe(true);
      expect(existsSync(join(out, target, IMAGES[target].bundle)), target).toBe(true);
      expect(existsSync(join(out, target, `${IMAGES[target].bundle}.map`)), target).toBe(true);
      for (const worker of IMAGES[target].workers ?? [])
        expect(existsSync(join(out, target, worker.bundle)), worker.bundle).toBe(true);
      for (const asset of IMAGES[target].assets)
        expect(existsSync(join(out, target, asset)), asset).toBe(true);
    }
  });

  it("leave out what a service does not use: no Prisma in the dispatcher, no Prisma and no pg in the sender", () => {
    const holds = (target: ImageTarget) => {
      const manifest = JSON.parse(readFileSync(join(out, target, "package.json"), "utf8"));
      const bundle = readFileSync(join(out, target, IMAGES[target].bundle), "utf8");
      const modules = new Set(installed(join(out, target)).map((p) => p.name));
      return {
        imports: Object.keys(manifest.dependencies),
        modules,
        prisma: /PrismaClient|@prisma\/client|prisma-client/.test(bundle),
      };
    };
    const sender = holds("sender");
    expect(sender.prisma).toBe(false);
    expect(sender.imports.filter((d) => d === "pg" || d.startsWith("@prisma/"))).toEqual([]);
    expect(
      [...sender.modules].filter((m) => m === "pg" || m.startsWith("pg-") || m.startsWith("@prisma/")),
    ).toEqual([]);
    const dispatcher = holds("dispatcher");
    expect(dispatcher.prisma).toBe(false);
    expect(dispatcher.imports).toContain("pg");
    expect(dispatcher.imports.filter((d) => d.startsWith("@prisma/"))).toEqual([]);
    // The gateway is where Prisma reads well, and is bundled.
    expect(holds("api-gateway").prisma).toBe(true);
  });

  it("run with plain node: migrate, then gateway, dispatcher and sender deliver a signed event", async () => {
    const shared = { AMQP_URL, AMQP_PREFIX: queues.prefix, HEALTH_HOST: "127.0.0.1" };
    const DATABASE_URL = databaseUrl(dbName);
    const ENCRYPTION_KEY = randomBytes(32).toString("base64");
    const key = `hk_${randomBytes(24).toString("hex")}`;

    const migrate = run("migrate", { DATABASE_URL });
    expect(await migrate.exited, migrate.output()).toBe(0);
    expect(migrate.output()).toMatch(/migration\(s\) applied/);
    // The read-only mode Kubernetes' init containers run from the same image.
    const check = run("migrate", { DATABASE_URL, MIGRATE_MODE: "wait", MIGRATE_TIMEOUT: "10s" });
    expect(await check.exited, check.output()).toBe(0);
    expect(check.output()).toContain("database is up to date");

    const [port, dispatcherPort, senderPort] = [await freePort(), await freePort(), await freePort()];
    const services = [
      run("api-gateway", {
        ...shared,
        DATABASE_URL,
        ENCRYPTION_KEY,
        PORT: String(port),
        HOST: "127.0.0.1",
        BOOTSTRAP_API_KEY: key,
      }),
      run("dispatcher", {
        ...shared,
        DATABASE_URL,
        RETRY_SCHEDULE: "1s",
        HEALTH_PORT: String(dispatcherPort),
      }),
      run("sender", {
        ...shared,
        ENCRYPTION_KEY,
        ALLOW_PRIVATE_DESTINATIONS: "true",
        HEALTH_PORT: String(senderPort),
      }),
    ];
    try {
      const base = `http://127.0.0.1:${port}`;
      await ready(`${base}/readyz`, services[0]!);
      await ready(`http://127.0.0.1:${dispatcherPort}/readyz`, services[1]!);
      await ready(`http://127.0.0.1:${senderPort}/readyz`, services[2]!);

      const api = apiClient(base, key);
      expect((await api("POST", "/v3/apps", { uid: "acme", name: "Acme" })).status).toBe(201);
      // With a schema: checked, and the event checked against it, on the bundled schema worker.
      const schema = {
        type: "object",
        required: ["ok"],
        properties: { code: { type: "string", pattern: "^(a+)+$" } },
      };
      expect((await api("POST", "/v3/event-types", { name: "image.checked", schema })).status).toBe(201);
      const refused = await api("POST", "/v3/events", {
        app: "acme",
        type: "image.checked",
        data: { code: `${"a".repeat(40)}!` },
      });
      expect(refused.body.error?.details).toEqual([
        { path: "/ok", message: "is required" },
        { path: "/code", message: 'must match pattern "^(a+)+$"' },
      ]);
      const endpoint = await api("POST", "/v3/endpoints", { app: "acme", url: `${receiver.url}/hook` });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
      const { secret } = (await api("GET", `/v3/endpoints/${endpoint.body.id}/secret`)).body;
      const event = await api("POST", "/v3/events", {
        app: "acme",
        type: "image.checked",
        data: { ok: true },
      });
      expect(event.status).toBe(201);

      await expect.poll(() => receiver.received("/hook").length, { timeout: 15_000 }).toBe(1);
      const request = receiver.received("/hook")[0]!;
      expect(request.headers["webhook-id"]).toBe(event.body.id);
      const verified = new Webhook(secret).verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      });
      expect(verified).toMatchObject({ type: "image.checked", data: { ok: true } });
      await expect
        .poll(async () => (await api("GET", `/v3/events/${event.body.id}`)).body.deliveries[0]?.status, {
          timeout: 15_000,
        })
        .toBe("succeeded");

      // The pages are in the gateway's image, where it looks for them.
      const page = await fetch(`${base}/dashboard`);
      expect(page.status).toBe(200);
      const script = /<script type="module"[^>]+src="([^"]+)"/.exec(await page.text())?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(base + script);
      expect([asset.status, asset.headers.get("content-type")]).toEqual([
        200,
        expect.stringMatching(/javascript/),
      ]);
    } finally {
      // SIGTERM, as tini passes it on: each stops what it is doing and exits 0.
      for (const s of services) s.child.kill("SIGTERM");
      const codes = await Promise.all(services.map((s) => s.exited));
      expect(
        Object.fromEntries(services.map((s, i) => [s.target, codes[i]])),
        services.map((s) => s.output()).join("\n"),
      ).toEqual({ "api-gateway": 0, dispatcher: 0, sender: 0 });
    }
  }, 60_000);
});
