import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AMQP_URL } from "./support/env.ts";
import { startGateway, type TestGateway } from "./support/gateway.ts";
import { createQueuePrefix, createTestDatabase } from "./support/isolation.ts";
import { freePort } from "./support/processes.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe("health", () => {
  it("answers /healthz and /readyz without a key", async () => {
    expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", broker: "ok" } });
  });
});

describe("the api-gateway process", () => {
  it("refuses to start on bad configuration, naming each variable", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "services/api-gateway/src/main.ts"], {
      env: { ...process.env, PORT: "99999", ENCRYPTION_KEY: "short", DATABASE_URL: "mysql://x" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    // EX_CONFIG: no restart helps (npm start stops instead of restarting it).
    expect(code).toBe(78);
    for (const name of ["PORT", "ENCRYPTION_KEY", "DATABASE_URL"]) expect(out).toContain(name);
  });

  it("finishes a request in flight on SIGTERM, then exits 0", async () => {
    const db = await createTestDatabase();
    const queues = createQueuePrefix();
    const port = await freePort();
    const key = `hk_${randomBytes(32).toString("base64url")}`;
    const child = spawn(process.execPath, ["--import", "tsx", "services/api-gateway/src/main.ts"], {
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: db.url,
        AMQP_URL,
        AMQP_PREFIX: queues.prefix,
        ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        BOOTSTRAP_API_KEY: key,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    child.stdout.on("data", (d) => (log += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      await expect.poll(() => log, { timeout: 20_000 }).toContain("api-gateway listening");
      const base = `http://127.0.0.1:${port}`;
      const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      // The bootstrap key works: the account holding it exists.
      expect((await fetch(`${base}/v3/apps`, { headers: auth })).status).toBe(200);
      // A slow upload keeps a request in flight while SIGTERM arrives.
      const body = new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('{"name":'));
          await new Promise((r) => setTimeout(r, 300));
          controller.enqueue(new TextEncoder().encode('"late"}'));
          controller.close();
        },
      });
      const inFlight = fetch(`${base}/v3/apps`, {
        method: "POST",
        headers: auth,
        body,
        duplex: "half",
      } as RequestInit);
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGTERM");
      const res = await inFlight;
      expect(res.status).toBe(201);
      expect(await exited).toBe(0);
      expect(log).toContain("shutting down");
    } finally {
      child.kill("SIGKILL");
      await queues.remove();
      await db.drop();
    }
  });
});
