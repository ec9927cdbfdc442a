// `npm start`: install what is missing, make sure Postgres and RabbitMQ answer, create and
// migrate the database, start every service as its own process (logs prefixed by service),
// and print the base URL and an API key.

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ensureBackingServices, ensureDependencies, readJson, root, run, say } from "./lib/setup.mjs";

ensureDependencies();
await ensureBackingServices();

// Local secrets, made once and kept in .herald/ (git-ignored), so restarts keep the same key.
const stateDir = join(root, ".herald");
const statePath = join(stateDir, "local.json");
const state = readJson(statePath, {});
state.encryptionKey ??= randomBytes(32).toString("base64");
state.adminToken ??= randomBytes(24).toString("base64url");
state.apiKey ??= `hk_${randomBytes(32).toString("base64url")}`;
mkdirSync(stateDir, { recursive: true });
writeFileSync(statePath, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });

const env = {
  ...process.env,
  PORT: process.env.PORT ?? "8080",
  DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/herald",
  AMQP_URL: process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672",
  ENCRYPTION_KEY: process.env.ENCRYPTION_KEY ?? state.encryptionKey,
  ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? state.adminToken,
  BOOTSTRAP_API_KEY: process.env.BOOTSTRAP_API_KEY ?? state.apiKey,
};

say("migrating the database…");
if (run(process.execPath, ["--import", "tsx", "packages/db/src/migrateCli.ts"], { env }) !== 0)
  process.exit(1);

const colors = { "api-gateway": 35, dispatcher: 33, sender: 32 };
const levels = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** pino JSON → one readable line: `time level message key=value…`. */
function pretty(line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  const { time, level, msg, service: _s, pid: _p, hostname: _h, ...rest } = entry;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  const clock = typeof time === "string" ? time.slice(11, 23) : "";
  return `${clock} ${(levels[level] ?? level).padEnd(5)} ${msg ?? ""}${fields ? ` ${fields}` : ""}`;
}

const children = [];
function startService(name, extraEnv = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", join("services", name, "src", "main.ts")], {
    cwd: root,
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tag = `\x1b[${colors[name] ?? 37}m[${name}]\x1b[0m`;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => console.log(`${tag} ${pretty(line)}`));
  }
  child.on("exit", (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? code}); stopping the others.`);
      stop(code || 1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r))))).then(
    () => process.exit(code),
  );
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

startService("api-gateway");

const base = `http://localhost:${env.PORT}`;
const deadline = Date.now() + 60_000;
while (Date.now() < deadline && !stopping) {
  const ready = await fetch(`${base}/readyz`).then(
    (r) => r.ok,
    () => false,
  );
  if (ready) break;
  await new Promise((r) => setTimeout(r, 300));
}
if (!stopping) {
  console.log(`
\x1b[1mHerald is running.\x1b[0m
  API          ${base}/v3
  Reference    ${base}/docs   (OpenAPI: ${base}/v3/openapi.json)
  API key      ${env.BOOTSTRAP_API_KEY}
  Admin token  ${env.ADMIN_TOKEN}

  Try it:  curl ${base}/v3/apps -H "Authorization: Bearer ${env.BOOTSTRAP_API_KEY}" -d name="My first customer"
  Stop:    Ctrl-C
`);
}
