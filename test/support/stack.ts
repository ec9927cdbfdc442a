import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { delayTiers, parseSchedule } from "@herald/db/lifecycle";
import { apiClient } from "./apiClient.ts";
import { AMQP_URL } from "./env.ts";
import { ADMIN_TOKEN, type Response } from "./gateway.ts";
import { createQueuePrefix, createTestDatabase } from "./isolation.ts";
import {
  freePort,
  SERVICE_NODE_FLAGS,
  type ServiceProcess,
  spawnService,
  stopAll,
  waitForOutput,
} from "./processes.ts";

/**
 * The whole system as `npm start` runs it: a gateway, a dispatcher and a sender, each its own
 * process with the heap cap of SERVICE_NODE_FLAGS, on a database and queue prefix of the
 * test's own. For tests whose question is whether a process survives (its heap, its event
 * loop): in-process services would share the test's heap and hide it.
 */
export type Stack = {
  url: string;
  /** The stack's own database, reached directly (not through `via`). */
  databaseUrl: string;
  services: ServiceProcess[];
  /** Makes an account through the operator route; returns its API key. */
  newAccount(name: string): Promise<string>;
  request(key: string, method: string, path: string, json?: unknown): Promise<Response>;
  /** The services that exited, each with the end of what it printed. */
  exited(): string[];
  /** Each running service's peak resident memory so far, in MiB (VmHWM). */
  peakMemory(): Record<string, number>;
  close(): Promise<void>;
};

export async function startStack(
  env: Record<string, string> = {},
  nodeFlags: string[] = SERVICE_NODE_FLAGS,
  /** The addresses the services reach PostgreSQL and RabbitMQ at (a test's proxies, say). */
  via: { database?: (url: string) => string; amqp?: string } = {},
): Promise<Stack> {
  const db = await createTestDatabase();
  const queues = createQueuePrefix();
  const port = await freePort();
  const shared = {
    DATABASE_URL: via.database ? via.database(db.url) : db.url,
    AMQP_URL: via.amqp ?? AMQP_URL,
    AMQP_PREFIX: queues.prefix,
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    RETRY_SCHEDULE: "1s,1s",
    ALLOW_PRIVATE_DESTINATIONS: "true",
    HEALTH_PORT: "0",
    HEALTH_HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    ...env,
  };
  const services = [
    spawnService(
      "api-gateway",
      "api-gateway",
      { ...shared, PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN },
      nodeFlags,
    ),
    // At info, to be seen consuming.
    spawnService("dispatcher", "dispatcher", { ...shared, LOG_LEVEL: "info" }, nodeFlags),
    spawnService("sender", "sender", { ...shared, LOG_LEVEL: "info" }, nodeFlags),
  ];
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await stopAll(services);
    // The delay queues its retry schedule declared, with the rest.
    await queues.remove(delayTiers(parseSchedule(shared.RETRY_SCHEDULE) ?? [])).catch(() => {});
    await db.drop();
  };
  try {
    await waitForReady(services[0]!, `${url}/readyz`);
    await waitForOutput(services[1]!, "dispatcher consuming", 60_000);
    await waitForOutput(services[2]!, "sender consuming", 60_000);
  } catch (err) {
    await close();
    throw err;
  }

  const request = (key: string, method: string, path: string, json?: unknown) =>
    apiClient(url, key)(method, path, json);

  return {
    url,
    databaseUrl: db.url,
    services,
    async newAccount(name) {
      const res = await request(ADMIN_TOKEN, "POST", "/admin/accounts", { name });
      if (res.status !== 201) throw new Error(`could not create an account: ${JSON.stringify(res.body)}`);
      return res.body.api_key.key as string;
    },
    request,
    exited: () =>
      services
        .filter((s) => s.child.exitCode !== null || s.child.signalCode !== null)
        .map(
          (s) => `${s.name} exited (${s.child.exitCode ?? s.child.signalCode}):\n${s.output().slice(-2000)}`,
        ),
    peakMemory: () =>
      Object.fromEntries(
        services
          .filter((s) => s.child.exitCode === null && s.child.pid)
          .map((s) => {
            const status = readFileSync(`/proc/${s.child.pid}/status`, "utf8");
            return [s.name, Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024)];
          }),
      ),
    close,
  };
}

async function waitForReady(service: ServiceProcess, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.child.exitCode !== null) throw new Error(`${service.name} exited:\n${service.output()}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${service.name} not ready:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
