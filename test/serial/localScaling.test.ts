import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient } from "../support/apiClient.ts";
import { root } from "../support/dockerfile.ts";
import { databaseUrl, RUN_ID } from "../support/env.ts";
import { createQueuePrefix } from "../support/isolation.ts";
import { removeLocalStart } from "../support/localStart.ts";
import { freePort } from "../support/processes.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { alive, descendants, freePorts, perReplica } from "../support/replicas.ts";

/**
 * `npm start -- --senders 3 --dispatchers 2`, run as a developer runs it (on a database, queue
 * prefix, ports and state folder of its own, so it runs beside a developer's instance): every
 * one of a few hundred events reaches the receiver correctly signed, every delivery ends
 * `succeeded`, the senders share the attempts as replicas across pods would, a replica killed
 * is started again, and Ctrl-C (SIGINT to the process group) stops every process. Runs alone: it starts seven processes.
 */
const EVENTS = 300;
const DISPATCHERS = 2;
const SENDERS = 3;

const dbName = `herald_t_${RUN_ID}_scaling`;
const queues = createQueuePrefix();
const stateDir = mkdtempSync(join(tmpdir(), "herald-state-"));
const key = `hk_${randomBytes(24).toString("hex")}`;
let receiver: Receiver;
let npm: ChildProcess;
let output = "";
let port: number;
let dispatcherBase: number;
let senderBase: number;
let processes: { pid: number; service: string }[] = [];

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.on("/scaled", () => ({ status: 200, delayMs: 5 + Math.floor(Math.random() * 20) }));
  port = await freePort();
  dispatcherBase = await freePorts(DISPATCHERS);
  senderBase = await freePorts(SENDERS);
  const { NODE_OPTIONS: _no, ...inherited } = process.env;
  npm = spawn("npm", ["start", "--", "--senders", String(SENDERS), "--dispatchers", String(DISPATCHERS)], {
    cwd: root,
    env: {
      ...inherited,
      PORT: String(port),
      HOST: "127.0.0.1",
      HEALTH_HOST: "127.0.0.1",
      DISPATCHER_HEALTH_PORT: String(dispatcherBase),
      SENDER_HEALTH_PORT: String(senderBase),
      DATABASE_URL: databaseUrl(dbName),
      AMQP_PREFIX: queues.prefix,
      HERALD_STATE_DIR: stateDir,
      BOOTSTRAP_API_KEY: key,
      LOG_LEVEL: "warn",
      NO_COLOR: "1",
    },
    // Its own process group, as a terminal's foreground job: Ctrl-C signals the whole group.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  npm.stdout!.on("data", (d) => (output += d));
  npm.stderr!.on("data", (d) => (output += d));
  const deadline = Date.now() + 120_000;
  while (!output.includes("Herald is running.")) {
    if (npm.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 150_000);

afterAll(async () => {
  // Whatever a failure left running (each service is in a process group of its own).
  const kill = (pid: number) => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  };
  if (npm?.pid) kill(-npm.pid);
  for (const { pid } of processes) kill(pid);
  await receiver?.close();
  await removeLocalStart(dbName, queues, stateDir);
}, 60_000);

describe("npm start with several dispatchers and senders", () => {
  it("delivers every event, signed, through 2 dispatchers and 3 senders, then stops on Ctrl-C", async () => {
    processes = descendants(npm.pid!);
    const counts: Record<string, number> = {};
    for (const { service } of processes) counts[service] = (counts[service] ?? 0) + 1;
    // One process per service replica, each its own Node process as a pod's would be.
    expect(counts).toMatchObject({
      "start.mjs": 1,
      "api-gateway": 1,
      dispatcher: DISPATCHERS,
      sender: SENDERS,
    });
    for (let i = 0; i < DISPATCHERS; i++) {
      await expect
        .poll(() =>
          fetch(`http://127.0.0.1:${dispatcherBase + i}/readyz`).then(
            (r) => r.status,
            () => 0,
          ),
        )
        .toBe(200);
    }
    for (let i = 0; i < SENDERS; i++) {
      await expect
        .poll(() =>
          fetch(`http://127.0.0.1:${senderBase + i}/readyz`).then(
            (r) => r.status,
            () => 0,
          ),
        )
        .toBe(200);
    }

    const base = `http://127.0.0.1:${port}`;
    const api = apiClient(base, key);
    expect((await api("POST", "/v3/apps", { uid: "acme", name: "Acme" })).status).toBe(201);
    expect((await api("POST", "/v3/event-types", { name: "scale.tested" })).status).toBe(201);
    const endpoint = await api("POST", "/v3/endpoints", { app: "acme", url: `${receiver.url}/scaled` });
    expect(endpoint.status).toBe(201);
    const { secret } = (await api("GET", `/v3/endpoints/${endpoint.body.id}/secret`)).body;

    const sent: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < EVENTS) {
          const n = next++;
          const res = await api("POST", "/v3/events", { app: "acme", type: "scale.tested", data: { n } });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          sent.push(res.body.id);
        }
      }),
    );

    // Every event arrives at least once, each request signed with the endpoint's secret.
    const seen = () => new Set(receiver.received("/scaled").map((r) => String(r.headers["webhook-id"])));
    await expect.poll(() => seen().size, { timeout: 60_000, interval: 250 }).toBe(EVENTS);
    expect(sent.filter((id) => !seen().has(id))).toEqual([]);
    const webhook = new Webhook(secret);
    for (const request of receiver.received("/scaled")) {
      const payload = webhook.verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }) as { type: string; data: { n: number } };
      expect(payload.type).toBe("scale.tested");
    }

    // Every delivery ends succeeded; no attempt is left pending or failed.
    const db = new pg.Client({ connectionString: databaseUrl(dbName) });
    await db.connect();
    const byStatus = async (table: string) =>
      Object.fromEntries(
        (await db.query(`SELECT status, count(*)::int AS n FROM ${table} GROUP BY status`)).rows.map((r) => [
          r.status,
          r.n,
        ]),
      );
    try {
      await expect
        .poll(() => byStatus("deliveries"), { timeout: 30_000, interval: 500 })
        .toEqual({ succeeded: EVENTS });
      const attempts = await byStatus("attempts");
      expect(Object.keys(attempts)).toEqual(["succeeded"]);
      expect(attempts.succeeded).toBeGreaterThanOrEqual(EVENTS);
    } finally {
      await db.end();
    }

    // The senders shared the attempts, and the dispatchers the fan-out and the results, as
    // competing consumers on one queue each; each delivery was created and recorded once.
    const perSender = await perReplica(senderBase, SENDERS, /^herald_attempts_total\{/);
    expect(sum(perSender)).toBeGreaterThanOrEqual(EVENTS);
    expect(perSender.filter((n) => n > 0).length, `attempts per sender: ${perSender}`).toBeGreaterThan(1);
    const fannedOut = await perReplica(
      dispatcherBase,
      DISPATCHERS,
      /^herald_deliveries_total\{[^}]*status="pending"/,
    );
    const recorded = await perReplica(
      dispatcherBase,
      DISPATCHERS,
      /^herald_deliveries_total\{[^}]*status="succeeded"/,
    );
    expect([sum(fannedOut), sum(recorded)]).toEqual([EVENTS, EVENTS]);
    const perDispatcher = fannedOut.map((n, i) => n + recorded[i]!);
    expect(perDispatcher.filter((n) => n > 0).length, `work per dispatcher: ${perDispatcher}`).toBe(
      DISPATCHERS,
    );

    // A replica that dies is started again after a second, the others going on meanwhile.
    const victim = processes.find((p) => p.service === "sender")!;
    process.kill(victim.pid, "SIGKILL");
    await expect
      .poll(() => output, { timeout: 15_000, interval: 200 })
      .toMatch(/sender(-\d)? exited \(SIGKILL\); restarting it in 1 s \(restart 1\)/);
    await expect
      .poll(() => descendants(npm.pid!).filter((p) => p.service === "sender").length, { timeout: 30_000 })
      .toBe(SENDERS);
    for (let i = 0; i < SENDERS; i++) {
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${senderBase + i}/readyz`).then(
              (r) => r.status,
              () => 0,
            ),
          { timeout: 30_000 },
        )
        .toBe(200);
    }
    processes = descendants(npm.pid!);
    expect(processes.map((p) => p.pid)).not.toContain(victim.pid);

    // Ctrl-C: SIGINT to the foreground process group. npm itself dies of it, as it does in a
    // terminal; start.mjs stops each service with SIGTERM, waits for them, and exits.
    process.kill(-npm.pid!, "SIGINT");
    await expect
      .poll(() => processes.filter((p) => alive(p.pid)).map((p) => p.service), {
        timeout: 30_000,
        interval: 200,
      })
      .toEqual([]);
    // The services can be gone a moment before npm itself has exited and been reaped.
    await expect
      .poll(() => npm.exitCode !== null || npm.signalCode !== null, { timeout: 10_000, interval: 100 })
      .toBe(true);
    expect(npm.exitCode === 0 || npm.signalCode === "SIGINT", `npm: ${npm.exitCode} ${npm.signalCode}`).toBe(
      true,
    );
    // No service but the one killed exited before it was told to (start.mjs would say so).
    expect(output.match(/exited \(/g)).toHaveLength(1);
    console.log(
      `local scaling: ${EVENTS} events through ${DISPATCHERS} dispatchers and ${SENDERS} senders, all delivered; ` +
        `attempts per sender ${perSender.join(", ")}; deliveries created + recorded per dispatcher ` +
        `${perDispatcher.join(", ")}; ${receiver.requests.length} requests arrived`,
    );
  }, 180_000);
});
