// `npm start`: install what is missing, make sure Postgres and RabbitMQ answer, create and
// migrate the database, start every service as its own process (logs prefixed by service),
// and print the base URL and an API key. `npm start -- --senders 3 --dispatchers 2` runs
// several dispatchers and senders, as replicas would run across pods.
//
// Everything it picks can be set in the environment, so a second instance (a test, say) can
// run beside a developer's without sharing anything: PORT (8080), DATABASE_URL, AMQP_URL,
// AMQP_PREFIX (herald), DISPATCHER_HEALTH_PORT (8081) and SENDER_HEALTH_PORT (8091) — replica i
// takes the base port + i — and HERALD_STATE_DIR (.herald), where the local secrets are kept.

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { relay } from "./lib/relay.mjs";
import {
  DEFAULT_AMQP_URL,
  DEFAULT_DATABASE_URL,
  ensureBackingServices,
  ensureDependencies,
  ensureSdkBuilt,
  ensureWebBuilt,
  readJson,
  root,
  run,
  SERVICE_NODE_FLAGS,
  say,
} from "./lib/setup.mjs";

function count(flag, fallback) {
  const i = process.argv.indexOf(flag);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1 || value > 32) {
    console.error(`${flag} takes a whole number from 1 to 32`);
    process.exit(2);
  }
  return value;
}
const dispatchers = count("--dispatchers", 1);
const senders = count("--senders", 1);
/** The health port of the first replica; replica i listens on base + i. */
function basePort(name, fallback) {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value < 1 || value > 65535 - 32) {
    console.error(`${name} must be a port number, got "${process.env[name]}"`);
    process.exit(2);
  }
  return value;
}
const DISPATCHER_HEALTH_PORT = basePort("DISPATCHER_HEALTH_PORT", 8081);
// By default the senders' ports follow the dispatchers' (8091 up, or later with 11+ dispatchers).
const SENDER_HEALTH_PORT = basePort(
  "SENDER_HEALTH_PORT",
  Math.max(8091, DISPATCHER_HEALTH_PORT + dispatchers),
);
if (
  SENDER_HEALTH_PORT < DISPATCHER_HEALTH_PORT + dispatchers &&
  DISPATCHER_HEALTH_PORT < SENDER_HEALTH_PORT + senders
) {
  console.error(
    `The dispatchers' health ports (${DISPATCHER_HEALTH_PORT} up) and the senders' (${SENDER_HEALTH_PORT} up) overlap; set DISPATCHER_HEALTH_PORT or SENDER_HEALTH_PORT apart.`,
  );
  process.exit(2);
}

ensureDependencies();
await ensureBackingServices();
ensureWebBuilt();
ensureSdkBuilt();

// Local secrets, made once and kept in .herald/ (git-ignored), so restarts keep the same key.
const stateDir = resolve(root, process.env.HERALD_STATE_DIR || ".herald");
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
  DATABASE_URL: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
  AMQP_URL: process.env.AMQP_URL ?? DEFAULT_AMQP_URL,
  ENCRYPTION_KEY: process.env.ENCRYPTION_KEY ?? state.encryptionKey,
  ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? state.adminToken,
  BOOTSTRAP_API_KEY: process.env.BOOTSTRAP_API_KEY ?? state.apiKey,
  // Local receivers (a test server on localhost) must be reachable here; deployments keep
  // private destinations refused.
  ALLOW_PRIVATE_DESTINATIONS: process.env.ALLOW_PRIVATE_DESTINATIONS ?? "true",
};

say("migrating the database…");
if (run(process.execPath, ["--import", "tsx", "packages/db/src/migrateCli.ts"], { env }) !== 0)
  process.exit(1);

const colors = { "api-gateway": 35, dispatcher: 33, sender: 32 };
/** Each service's current process, by label. */
const children = new Map();
/**
 * A service that exits unexpectedly is started again, as Kubernetes restarts a pod's container:
 * after 1 s, doubling to 30 s while it keeps exiting soon after its start, back to 1 s once it
 * ran a minute. The others go on. One that refuses its configuration stops everything, since
 * no restart would help. Ctrl-C (or SIGTERM) stops them all.
 */
const RESTART_MIN_MS = 1000;
const RESTART_MAX_MS = 30_000;
const RAN_LONG_ENOUGH_MS = 60_000;
/** A service's exit status when its configuration is refused (runtime's EXIT_CONFIG): no restart helps. */
const EXIT_CONFIG = 78;
/** Restarts waiting for their delay: Ctrl-C cancels them. */
const pending = new Set();
function supervise(service, label, extraEnv = {}) {
  let delayMs = RESTART_MIN_MS;
  let restarts = 0;
  const launch = () => {
    const started = Date.now();
    const child = startService(service, label, extraEnv);
    children.set(label, child);
    child.on("exit", (code, signal) => {
      if (stopping) return;
      if (code === EXIT_CONFIG) {
        say(`${label} refused its configuration (see above); stopping the others.`);
        stop(1);
        return;
      }
      if (Date.now() - started >= RAN_LONG_ENOUGH_MS) delayMs = RESTART_MIN_MS;
      restarts++;
      say(`${label} exited (${signal ?? code}); restarting it in ${delayMs / 1000} s (restart ${restarts}).`);
      const timer = setTimeout(() => {
        pending.delete(timer);
        if (!stopping) launch();
      }, delayMs);
      pending.add(timer);
      delayMs = Math.min(delayMs * 2, RESTART_MAX_MS);
    });
  };
  launch();
}

function startService(service, label, extraEnv) {
  const child = spawn(
    process.execPath,
    [...SERVICE_NODE_FLAGS, "--import", "tsx", join("services", service, "src", "main.ts")],
    {
      cwd: root,
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: Ctrl-C reaches only this script, which then stops each service
      // once with SIGTERM (a second signal would make a service exit without finishing).
      detached: true,
    },
  );
  const tag = `\x1b[${colors[service] ?? 37}m[${label}]\x1b[0m`;
  for (const stream of [child.stdout, child.stderr]) relay(stream, tag, process.stdout);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const timer of pending) clearTimeout(timer);
  const running = [...children.values()].filter((c) => c.exitCode === null && c.signalCode === null);
  for (const child of running) child.kill("SIGTERM");
  Promise.all(running.map((c) => new Promise((r) => c.once("exit", r)))).then(() => process.exit(code));
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
process.on("exit", () => {
  for (const child of children.values()) if (child.exitCode === null) child.kill("SIGKILL");
});

supervise("api-gateway", "api-gateway");
const health = [];
for (let i = 0; i < dispatchers; i++) {
  const label = dispatchers > 1 ? `dispatcher-${i + 1}` : "dispatcher";
  health.push(`${label} :${DISPATCHER_HEALTH_PORT + i}`);
  supervise("dispatcher", label, { HEALTH_PORT: String(DISPATCHER_HEALTH_PORT + i) });
}
for (let i = 0; i < senders; i++) {
  const label = senders > 1 ? `sender-${i + 1}` : "sender";
  health.push(`${label} :${SENDER_HEALTH_PORT + i}`);
  supervise("sender", label, { HEALTH_PORT: String(SENDER_HEALTH_PORT + i) });
}
if (env.ALLOW_PRIVATE_DESTINATIONS === "true") {
  say(
    "ALLOW_PRIVATE_DESTINATIONS=true: senders may call endpoints on localhost and private networks (local use only).",
  );
}

const base = `http://localhost:${env.PORT}`;
let deadline = Date.now() + 60_000;
let ready = false;
while (!ready && !stopping) {
  ready = await fetch(`${base}/readyz`).then(
    (r) => r.ok,
    () => false,
  );
  if (ready) break;
  if (Date.now() > deadline) {
    say(`not ready after a minute: ${base}/readyz says which dependency is missing; still waiting for it.`);
    deadline = Number.POSITIVE_INFINITY;
  }
  await new Promise((r) => setTimeout(r, 300));
}
if (ready && !stopping) {
  console.log(`
\x1b[1mHerald is running.\x1b[0m
  API          ${base}/v3
  Reference    ${base}/docs   (OpenAPI: ${base}/v3/openapi.json)
  Dashboard    ${base}/dashboard   (sign in with the API key below)
  Portal       POST ${base}/v3/apps/{app}/portal-sessions gives a customer's link
  API key      ${env.BOOTSTRAP_API_KEY}
  Admin token  ${env.ADMIN_TOKEN}
  Services     api-gateway :${env.PORT}, ${health.join(", ")} (GET /healthz, /readyz)

  Try it:  curl ${base}/v3/apps -H "Authorization: Bearer ${env.BOOTSTRAP_API_KEY}" -d name="My first customer"
  CLI:     export HERALD_URL=${base} HERALD_API_KEY=${env.BOOTSTRAP_API_KEY}
           npx herald apps list          (--help for every command)
  Listen:  npx herald listen --app <app> --forward-to http://localhost:3000/webhooks
           deliveries of that app reach your local server, signed, with no public address
  Stop:    Ctrl-C
`);
}
