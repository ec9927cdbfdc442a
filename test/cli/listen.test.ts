import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { deadPort } from "../support/ports.ts";
import { startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";
import { startTcpProxy } from "../support/tcpProxy.ts";
import { cliEnv, herald, start } from "./cli.ts";

/**
 * `herald listen --forward-to`: a real signed delivery reaches a server on this machine through
 * the gateway, verified with the independent standardwebhooks package, and the local answer is
 * the attempt's response. The secret is the profile's, the same each session; the temporary
 * endpoint goes when the CLI stops.
 */
let sys: TestSystem;
let f: ReturnType<typeof fixtures>;

type Local = { url: string; got: { headers: IncomingHttpHeaders; body: string }[]; close(): Promise<void> };

/** A developer's local server: answers 201 with a body of its own. */
async function localServer(): Promise<Local> {
  const got: Local["got"] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      got.push({ headers: req.headers, body });
      res.writeHead(201, { "content-type": "text/plain" }).end("hello from localhost");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s", ATTEMPT_TIMEOUT: "3s" });
  f = fixtures(sys, await startReceiver());
  await setupApp(sys, ["order.placed", "order.shipped"]);
});
afterAll(async () => {
  await sys?.close();
});

const listenEndpoints = async () =>
  (await sys.request("GET", "/v3/endpoints?app=acme&limit=100")).body.data.filter((e: { url: string }) =>
    e.url.startsWith("herald-listen:"),
  );

describe("herald listen", () => {
  it("forwards a signed delivery to a local server and records the local answer as the attempt", async () => {
    const local = await localServer();
    const env = cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: sys.key });
    const secret = (await herald(["listen", "--print-secret"], env)).stdout.trim();
    expect(secret).toMatch(/^whsec_/);

    const cli = start(
      ["listen", "--forward-to", local.url, "--app", "acme", "--events", "order.placed"],
      env,
    );
    await cli.waitFor(/signing secret\s+whsec_\S+/);
    expect(cli.output().stderr).toContain(secret);
    const endpoint = /endpoint\s+(ep_\w+)/.exec(cli.output().stderr)![1]!;

    const event = await f.send("order.placed", { total: 42 });
    await expect.poll(() => local.got.length, { timeout: 15_000 }).toBe(1);
    const [request] = local.got;
    // Signed exactly as in production, with the secret the profile keeps.
    const payload = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>) as {
      type: string;
      data: unknown;
    };
    expect(payload).toMatchObject({ type: "order.placed", data: { total: 42 } });
    expect(request!.headers["webhook-id"]).toBe(event);
    await expect.poll(() => f.status(event, endpoint), { timeout: 10_000 }).toBe("succeeded");
    const [attempt] = await f.attempts(`endpoint=${endpoint}`);
    expect(attempt).toMatchObject({ response_status: 201, response_body: "hello from localhost" });
    await cli.waitFor(new RegExp(`order\\.placed\\s+${event}\\s+→ 201`));

    // Only the types asked for reach it.
    await f.send("order.shipped");
    expect(await cli.interrupt()).toBe(0);
    expect(local.got).toHaveLength(1);
    // Stopped, its endpoint is gone.
    await expect.poll(listenEndpoints, { timeout: 10_000 }).toEqual([]);
    await local.close();
  });

  it("survives a local answer too big or too binary for a frame, and stops when the gateway ends it", {
    timeout: 60_000,
  }, async () => {
    const huge = randomBytes(200 * 1024);
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "x-many": "y".repeat(5000) }).end(huge));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const env = cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: sys.key });
    const cli = start(
      ["listen", "--forward-to", `http://127.0.0.1:${port}/`, "--app", "acme", "--json"],
      env,
    );
    const ready = JSON.parse(await cli.waitFor(/\{"type":"ready"[^\n]*\}/));
    expect(ready).not.toHaveProperty("secret");
    for (const n of [1, 2]) {
      const event = await f.send("order.shipped", { n });
      await expect
        .poll(async () => (await f.attempts(`endpoint=${ready.endpoint}&event=${event}`))[0]?.status, {
          timeout: 10_000,
        })
        .toBe("succeeded");
    }
    const [attempt] = await f.attempts(`endpoint=${ready.endpoint}`);
    expect((attempt as unknown as { response_body: string }).response_body.length).toBeLessThanOrEqual(4096);
    // Deleted through the API: the gateway ends the session (within its 20 s check), and the CLI
    // stops rather than make a new endpoint nobody asked for.
    expect((await sys.request("DELETE", `/v3/endpoints/${ready.endpoint}`)).status).toBe(200);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toContain("The gateway ended the session");
    expect(await listenEndpoints()).toEqual([]);
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("answers 502 with the reason when the local server is down, and keeps listening", async () => {
    const env = cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: sys.key });
    const cli = start(
      ["listen", "--forward-to", `http://127.0.0.1:${await deadPort()}/hooks`, "--app", "acme", "--json"],
      env,
    );
    const ready = JSON.parse(await cli.waitFor(/\{"type":"ready"[^\n]*\}/));
    const event = await f.send("order.shipped");
    await cli.waitFor(/"type":"delivery"[^\n]*"status":502/);
    await expect
      .poll(async () => (await f.attempts(`endpoint=${ready.endpoint}&event=${event}`))[0]?.response_status, {
        timeout: 10_000,
      })
      .toBe(502);
    const [attempt] = await f.attempts(`endpoint=${ready.endpoint}&event=${event}`);
    expect((attempt as { response_body?: string }).response_body ?? "").toContain("ECONNREFUSED");
    expect(await cli.interrupt()).toBe(0);
  });

  it("connects again after the network drops, with the same secret, and delivers again", async () => {
    const local = await localServer();
    const gateway = new URL(sys.url);
    const proxy = await startTcpProxy(gateway.hostname, Number(gateway.port));
    const env = cliEnv({ HERALD_URL: `http://127.0.0.1:${proxy.port}`, HERALD_API_KEY: sys.key });
    const secret = (await herald(["listen", "--print-secret"], env)).stdout.trim();
    const cli = start(["listen", "--forward-to", local.url, "--app", "acme"], env);
    await cli.waitFor(/signing secret\s+whsec_\S+/);
    const first = /endpoint\s+(ep_\w+)/.exec(cli.output().stderr)![1]!;
    await proxy.cut();
    await cli.waitFor(/Connection lost/);
    await proxy.restore();
    await cli.waitFor(/Connected again\.[\s\S]*signing secret\s+unchanged/, 30_000);
    const second = [...cli.output().stderr.matchAll(/endpoint\s+(ep_\w+)/g)].at(-1)![1]!;
    expect(second).not.toBe(first);
    const event = await f.send("order.placed", { again: true });
    await expect.poll(() => local.got.length, { timeout: 15_000 }).toBeGreaterThan(0);
    const got = local.got.find((r) => r.headers["webhook-id"] === event)!;
    expect(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
    expect(await cli.interrupt()).toBe(0);
    // The first socket's endpoint went when the gateway saw it close; the second's on exit.
    await expect.poll(listenEndpoints, { timeout: 10_000 }).toEqual([]);
    await proxy.close();
    await local.close();
  });

  it("fails clearly when it cannot start", async () => {
    const env = cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: sys.key });
    const usage = await herald(["listen", "--app", "acme"], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--forward-to");
    const badApp = await herald(["listen", "--forward-to", "http://localhost:1/x", "--app", "nope"], env);
    expect(badApp.code).toBe(4);
    const badKey = await herald(
      [
        "listen",
        "--forward-to",
        "http://localhost:1/x",
        "--app",
        "acme",
        "--api-key",
        "hk_not_a_real_key_0000000000000000",
      ],
      env,
    );
    expect(badKey.code).toBe(3);
    const down = await herald(
      [
        "listen",
        "--forward-to",
        "http://localhost:1/x",
        "--app",
        "acme",
        "--url",
        `http://127.0.0.1:${await deadPort()}`,
      ],
      env,
    );
    expect(down.code).toBe(5);
  });
});
