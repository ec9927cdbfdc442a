import type { AddressInfo } from "node:net";
import { createLogger, createRegistry } from "@herald/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createGateway, type Gateway } from "../../services/api-gateway/src/app.ts";
import { loadConfig } from "../../services/api-gateway/src/config.ts";
import { setupApp } from "../support/fixtures.ts";
import { type ListenClient, type ListenRefusal, openListen } from "../support/listenSocket.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * LISTEN_MAX_PER_ACCOUNT counts open `herald listen` sockets, on every gateway of the
 * installation: a socket whose endpoint was deleted counts until it is closed, and deleting the
 * endpoint closes it within a second, whichever gateway holds it.
 */
let sys: TestSystem;
let second: { url: string; gateway: Gateway };

beforeAll(async () => {
  sys = await startSystem({ LISTEN_MAX_PER_ACCOUNT: "2", ATTEMPT_TIMEOUT: "2s" });
  await setupApp(sys, ["order.placed"]);
  // Another replica on the same database and broker, as a deployment runs several.
  const gateway = createGateway(
    loadConfig(sys.env),
    createLogger("api-gateway", process.env.TEST_LOG_LEVEL ?? "silent"),
    createRegistry("api-gateway"),
  );
  const server = await gateway.start();
  second = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, gateway };
});
afterAll(async () => {
  await second?.gateway.stop();
  await sys?.close();
});

const isOpen = (c: ListenClient) => c.ws.readyState === WebSocket.OPEN;

describe("LISTEN_MAX_PER_ACCOUNT", () => {
  it("counts a socket whose endpoint was deleted until it closes, which is within a second, on any gateway", async () => {
    const mine = await openListen(sys.url, "app=acme", sys.key);
    const theirs = await openListen(second.url, "app=acme", sys.key);
    // Both deleted through the first gateway: one socket is its own, the other the second's.
    for (const s of [mine, theirs]) {
      const res = await sys.request("DELETE", `/v3/endpoints/${s.ready.endpoint.id}`);
      expect(res.status).toBe(200);
    }
    const deletedAt = Date.now();

    // Opening more at once, on either gateway: never more than two open together.
    const opened: ListenClient[] = [];
    const openTogether: number[] = [];
    const refusals: string[] = [];
    for (let i = 0; i < 20; i++) {
      await openListen(i % 2 ? second.url : sys.url, "app=acme", sys.key).then(
        (s) => {
          opened.push(s);
          openTogether.push([mine, theirs, ...opened].filter(isOpen).length);
        },
        (err: ListenRefusal) => refusals.push(err.body?.error?.code ?? String(err)),
      );
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(Math.max(...openTogether)).toBeLessThanOrEqual(2);
    expect(new Set(refusals)).toEqual(new Set(["listen_limit_reached"]));

    // Both closed by the gateway on purpose (1000), within a second (with slack for a slow machine).
    for (const s of [mine, theirs]) {
      expect(s.closed?.code).toBe(1000);
      expect(s.closed!.at - deletedAt).toBeLessThan(5_000);
    }
    // Their places were given to new sockets once they closed.
    expect(opened.filter(isOpen)).toHaveLength(2);
    for (const s of opened) s.ws.close();
  });
});
