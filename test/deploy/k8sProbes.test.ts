import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { delayTiers } from "@herald/db/lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig as dispatcherConfig } from "../../services/dispatcher/src/config.ts";
import { AMQP_URL } from "../support/env.ts";
import { createQueuePrefix, createTestDatabase } from "../support/isolation.ts";
import {
  containerEnv,
  find,
  render,
  root,
  type Service,
  sampleSecrets,
  serviceContainer,
  services,
} from "../support/k8s.ts";
import { freePort, runNode } from "../support/processes.ts";

/**
 * Each service started as its production pod would start it: with exactly the environment the
 * rendered manifests give its container (only the database, the broker, the queue prefix and
 * the port swapped for this machine's), then asked for every path its probes ask for, on the
 * port they name, and stopped with SIGTERM within its terminationGracePeriodSeconds. Each gets
 * an empty temporary directory of its own (TMPDIR, /tmp in the pod) and must leave it empty:
 * the root filesystem is read-only and /tmp a small emptyDir, kept only for Node's own use.
 */
const objects = render("production");
const db = await createTestDatabase();
const queues = createQueuePrefix();
const running: ChildProcess[] = [];
const tmpDirs: string[] = [];

afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
  await db.drop();
  const schedule = dispatcherConfig(
    containerEnv(objects, serviceContainer(objects, "dispatcher"), sampleSecrets("k")),
  ).retrySchedule;
  await queues.remove(delayTiers(schedule));
});

type Started = { port: number; child: ChildProcess; output: () => string; tmp: string };

async function start(service: Service, overrides: Record<string, string> = {}): Promise<Started> {
  const container = serviceContainer(objects, service);
  const env = containerEnv(objects, container, sampleSecrets(randomBytes(32).toString("base64")));
  const port = await freePort();
  const portVariable = service === "api-gateway" ? "PORT" : "HEALTH_PORT";
  expect(env[portVariable], `${service} sets ${portVariable}`).toBeDefined();
  Object.assign(env, { AMQP_URL, AMQP_PREFIX: queues.prefix, [portVariable]: String(port) });
  if (env.DATABASE_URL) env.DATABASE_URL = db.url;
  Object.assign(env, overrides);
  const tmp = mkdtempSync(join(tmpdir(), `herald-k8s-${service}-`));
  tmpDirs.push(tmp);
  // Nothing from this test's own environment: the pod's, plus what finds `node` and its modules.
  const { child, output } = runNode(["--import", "tsx", join("services", service, "src", "main.ts")], {
    cwd: root,
    // tsx, which the image does not have (it runs the bundle), would cache its output in TMPDIR.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmp, TSX_DISABLE_CACHE: "1", ...env },
  });
  running.push(child);
  return { port, child, output, tmp };
}

async function get(port: number, path: string): Promise<number> {
  return fetch(`http://127.0.0.1:${port}${path}`).then(
    (res) => res.status,
    () => 0,
  );
}

describe.each(Object.keys(services) as Service[])("the %s pod", (service) => {
  let started: Started;
  beforeAll(async () => {
    started = await start(service);
  });

  it("answers its startup, liveness and readiness probes", async () => {
    const container = serviceContainer(objects, service);
    const probes = [container.startupProbe, container.livenessProbe, container.readinessProbe];
    for (const probe of probes) {
      const { path, port } = probe.httpGet;
      // A named port is the container's; the live server listens where the env says.
      expect(container.ports.map((p: { name: string }) => p.name)).toContain(port);
      await expect.poll(() => get(started.port, path), { timeout: 30_000, interval: 200 }).toBe(200);
    }
    // The server answering is the service's own: an unknown path is a 404, not a 200.
    expect(await get(started.port, "/no-such-probe")).toBe(404);
    expect(started.child.exitCode, started.output()).toBeNull();
  });

  it("exits 0 on SIGTERM within its termination grace period", async () => {
    const grace = find(objects, "Deployment", services[service].deployment).spec.template.spec
      .terminationGracePeriodSeconds;
    const exited = new Promise<number | null>((resolve) => started.child.once("exit", resolve));
    const t0 = Date.now();
    started.child.kill("SIGTERM");
    expect(await exited, started.output()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(grace * 1000);
  });

  it("wrote nothing to its temporary directory while it ran", () => {
    expect(readdirSync(started.tmp)).toEqual([]);
  });
});

describe.each(["dispatcher", "sender"] as const)("the %s pod, stopped while it starts", (service) => {
  it("is not ready while its broker does not answer, and exits 0 on SIGTERM", async () => {
    // A broker that does not answer keeps the start waiting, as a slow one would.
    const started = await start(service, { AMQP_URL: `amqp://guest:guest@127.0.0.1:${await freePort()}` });
    await expect.poll(() => get(started.port, "/readyz"), { timeout: 30_000, interval: 100 }).toBe(503);
    const exited = new Promise<number | null>((resolve) => started.child.once("exit", resolve));
    started.child.kill("SIGTERM");
    expect(await exited, started.output()).toBe(0);
  });
});
