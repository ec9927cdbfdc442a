// Shared by `npm start` and `npm test`: make a fresh clone runnable. Node built-ins only,
// since this runs before any dependency is installed.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const PNPM_VERSION = "10.34.8";

/**
 * Node flags every service runs with (packages/runtime/service-node-flags.json, read by the
 * benchmark and the Dockerfile test too).
 * V8 sizes its heap to the machine (gigabytes here) and collects lazily; capping the old
 * space keeps each process under 250 MB resident under full load (`npm run bench`).
 */
export const SERVICE_NODE_FLAGS = JSON.parse(
  readFileSync(new URL("../../packages/runtime/service-node-flags.json", import.meta.url), "utf8"),
);

export function say(line) {
  console.log(`\x1b[36m[herald]\x1b[0m ${line}`);
}

function onPath(cmd) {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

/** pnpm, as installed or through npx (pnpm 10: 11+ needs Node 22). */
export function pnpmCommand() {
  if (onPath("pnpm")) {
    const version = spawnSync("pnpm", ["--version"], { encoding: "utf8" }).stdout.trim();
    if (version.startsWith("10.")) return ["pnpm"];
  }
  return ["npx", "--yes", `pnpm@${PNPM_VERSION}`];
}

export function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...options });
  return result.status ?? 1;
}

/** Installs dependencies when node_modules is missing or older than the lockfile. */
export function ensureDependencies() {
  const marker = join(root, "node_modules", ".modules.yaml");
  const lock = join(root, "pnpm-lock.yaml");
  const generated = join(root, "packages", "db", "src", "generated", "client.ts");
  if (existsSync(marker) && existsSync(generated) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs)
    return;
  say("installing dependencies (pnpm install)…");
  const [cmd, ...args] = pnpmCommand();
  const status = run(cmd, [...args, "install", "--frozen-lockfile", "--reporter=append-only"], {
    env: { ...process.env, COREPACK_ENABLE_STRICT: "0" },
  });
  if (status !== 0) {
    console.error("pnpm install failed: see the output above.");
    process.exit(status);
  }
}

function reachable(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** The services' defaults (packages/runtime/src/config.ts), repeated for scripts that run before installing; a test keeps them equal. */
export const DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/herald";
export const DEFAULT_AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";

const LOCAL = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

const services = [
  {
    name: "PostgreSQL",
    urlVar: "DATABASE_URL",
    fallback: DEFAULT_DATABASE_URL,
    port: 5432,
    start: () => {
      const version = execFileSync("ls", ["/etc/postgresql"], { encoding: "utf8" }).trim().split("\n")[0];
      return ["pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"]];
    },
    hint: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
    installed: () => existsSync("/etc/postgresql") && onPath("pg_ctlcluster"),
  },
  {
    name: "RabbitMQ",
    urlVar: "AMQP_URL",
    fallback: DEFAULT_AMQP_URL,
    port: 5672,
    start: () => ["rabbitmq-server", ["-detached"]],
    hint: "rabbitmq-server -detached",
    installed: () => onPath("rabbitmq-server"),
  },
];

/** Makes sure Postgres and RabbitMQ answer; starts local ones that are installed but stopped. */
export async function ensureBackingServices(env = process.env) {
  for (const service of services) {
    const url = new URL(env[service.urlVar] || service.fallback);
    const host = url.hostname;
    const port = Number(url.port || service.port);
    if (await reachable(host, port)) continue;
    if (!LOCAL.has(host) || !service.installed()) {
      console.error(
        `${service.name} does not answer at ${host}:${port}.\n` +
          (LOCAL.has(host) ? `Install and start it, e.g.: ${service.hint}\n` : "") +
          `Or point ${service.urlVar} at a running one.`,
      );
      process.exit(1);
    }
    say(`${service.name} is not running; starting it (${service.hint})…`);
    const [cmd, args] = service.start();
    spawnSync(cmd, args, { stdio: "inherit" });
    const deadline = Date.now() + 90_000;
    while (!(await reachable(host, port))) {
      if (Date.now() > deadline) {
        console.error(`${service.name} did not come up within 90 s. Start it by hand: ${service.hint}`);
        process.exit(1);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    say(`${service.name} is up.`);
  }
}

export function readJson(path, fallback) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return fallback;
  }
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds the portal and dashboard (Vite) when the build is missing or older than its sources. */
export function ensureWebBuilt({ force = false } = {}) {
  const web = join(root, "packages", "web");
  const built = join(web, "dist", "dashboard.html");
  if (!force && existsSync(built) && statSync(built).mtimeMs >= newestMtime(web)) return;
  say("building the portal and dashboard (vite build)…");
  const [cmd, ...args] = pnpmCommand();
  const status = run(cmd, [...args, "--filter", "@herald/web", "build"]);
  if (status !== 0) {
    console.error("Building the pages failed: see the output above.");
    process.exit(status);
  }
}

/**
 * Builds the SDK (packages/sdk/dist, ESM and type declarations) when the build is missing or older
 * than its sources: it is imported as published, from dist (by its tests, and by the CLI).
 */
export function ensureSdkBuilt({ force = false } = {}) {
  const sdk = join(root, "packages", "sdk");
  const built = join(sdk, "dist", "index.js");
  if (!force && existsSync(built) && statSync(built).mtimeMs >= newestMtime(sdk)) return;
  say("building the SDK (tsc)…");
  const [cmd, ...args] = pnpmCommand();
  const status = run(cmd, [...args, "--filter", "@herald/sdk", "build"]);
  if (status !== 0) {
    console.error("Building the SDK failed: see the output above.");
    process.exit(status);
  }
}

export const CHROMIUM = "/usr/bin/chromium";

/** The browser tests drive Debian's Chromium; installs it when it is missing. */
export function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  say("installing Chromium for the browser tests (apt-get install -y chromium)…");
  const [cmd, ...pre] = process.getuid?.() === 0 ? ["apt-get"] : ["sudo", "apt-get"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = (...args) => spawnSync(cmd, [...pre, ...args], { stdio: "inherit", env }).status;
  // The package lists may be missing or stale on a new machine: refresh them once if needed.
  if (apt("install", "-y", "chromium") !== 0 && apt("update") === 0) apt("install", "-y", "chromium");
  if (!existsSync(CHROMIUM)) {
    console.error(`Chromium is needed at ${CHROMIUM} for the browser tests: apt-get install -y chromium`);
    process.exit(1);
  }
}

/** deploy/ needs kustomize v5 (components, `labels`), which kubectl 1.27 and later embed. */
export const KUSTOMIZE_MAJOR = 5;

/** Why kubectl cannot render deploy/, or null when it can. */
export function kubectlProblem() {
  const found = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
  if (found.error || found.status !== 0) return "kubectl is not installed";
  const kustomize = /Kustomize Version: v(\d+)/.exec(found.stdout);
  if (kustomize && Number(kustomize[1]) >= KUSTOMIZE_MAJOR) return null;
  const client =
    /GitVersion:"([^"]+)"/.exec(found.stdout)?.[1] ?? /Client Version: (v[\d.]+\S*)/.exec(found.stdout)?.[1];
  return `kubectl ${client ?? "(unknown version)"} has ${kustomize ? `kustomize v${kustomize[1]}` : "no kustomize v4 or later"}, and deploy/ needs kustomize v${KUSTOMIZE_MAJOR} (kubectl 1.27 or later)`;
}

/**
 * The Kubernetes tests (test/deploy/k8s*.test.ts) render deploy/ with `kubectl kustomize`.
 * Uses the kubectl on PATH when it is new enough, else installs Debian's kubernetes-client.
 * When that gives none or an older one (bookworm's is 1.20), says how to get one and goes on:
 * the Kubernetes tests then fail with the same message, the others still run.
 */
export function ensureKubectl() {
  if (!kubectlProblem()) return;
  say("installing kubectl for the Kubernetes tests (apt-get install -y kubernetes-client)…");
  const [cmd, ...pre] = process.getuid?.() === 0 ? ["apt-get"] : ["sudo", "apt-get"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = (...args) => spawnSync(cmd, [...pre, ...args], { stdio: "inherit", env }).status;
  const install = ["install", "-y", "--no-install-recommends", "kubernetes-client"];
  if (apt(...install) !== 0 && apt("update") === 0) apt(...install);
  const problem = kubectlProblem();
  if (problem) {
    console.error(
      `${problem}: the Kubernetes tests will fail. Install kubectl 1.27 or later ` +
        "(https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/) and put it on PATH.",
    );
  }
}
