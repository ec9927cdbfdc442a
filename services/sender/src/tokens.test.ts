import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import got from "got";
import { describe, expect, it } from "vitest";
import { guardedLookup } from "./destinations.ts";
import { TokenCache } from "./tokens.ts";

const config = (token_url: string) => ({ token_url, client_id: "a", client_secret: "b" });

describe("OAuth2 tokens and the SSRF guard", () => {
  it("refuses a token URL at a private address, literal or resolved, unless private destinations are allowed", async () => {
    const client = got.extend({ dnsLookup: guardedLookup as never, retry: { limit: 0 } });
    const tokens = new TokenCache();
    await expect(
      tokens.token("ep_1", config("http://127.0.0.1:9/token"), client, false, false),
    ).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
    await expect(
      tokens.token("ep_1", config("http://localhost:9/token"), client, false, false),
    ).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
  });

  it("shares one fetch among an endpoint's attempts, each waiting until its own deadline, not the first's", async () => {
    let asked = 0;
    const server = createServer((_req, res) => {
      asked++;
      setTimeout(() => res.end(JSON.stringify({ access_token: `t${asked}`, expires_in: 60 })), 300);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    const client = got.extend({ retry: { limit: 0 } });
    const tokens = new TokenCache(5000);
    try {
      const early = tokens.token("ep_1", config(url), client, true, false, AbortSignal.timeout(50));
      const patient = tokens.token("ep_1", config(url), client, true, false, AbortSignal.timeout(5000));
      await expect(early).rejects.toMatchObject({ name: "TimeoutError" });
      await expect(patient).resolves.toBe("t1");
      expect(asked).toBe(1);
      // Kept for the endpoint; settings of its own changed make a new one, which replaces it.
      await expect(tokens.token("ep_1", config(url), client, true, false)).resolves.toBe("t1");
      const changed = { ...config(url), scope: "more" };
      await expect(tokens.token("ep_1", changed, client, true, false)).resolves.toBe("t2");
      await expect(tokens.token("ep_1", config(url), client, true, false)).resolves.toBe("t3");
      expect(asked).toBe(3);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("leaves no failure unhandled: a fetch all its waiters gave up on, or one asked for past the deadline", async () => {
    let asked = 0;
    const server = createServer((_req, res) => {
      asked++;
      setTimeout(() => res.writeHead(400).end('{"error":"invalid_client"}'), 200);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    const client = got.extend({ retry: { limit: 0 }, throwHttpErrors: false });
    const tokens = new TokenCache(5000);
    try {
      // Vitest fails the run on an unhandled rejection: each case waits past the fetch's failure.
      const past = () => new Promise((r) => setTimeout(r, 400));
      // The deadline already passed (an endpoint's slow 401 used it up): no fetch is started.
      await expect(
        tokens.token("ep_2", config(url), client, true, true, AbortSignal.abort()),
      ).rejects.toMatchObject({ name: "AbortError" });
      await past();
      expect(asked).toBe(0);
      // Its only waiter gives up; the fetch fails after.
      await expect(
        tokens.token("ep_2", config(url), client, true, false, AbortSignal.timeout(20)),
      ).rejects.toMatchObject({ name: "TimeoutError" });
      await past();
      expect(asked).toBe(1);
      await expect(tokens.token("ep_2", config(url), client, true, false)).rejects.toMatchObject({
        code: "HERALD_AUTH_ERROR",
        kind: "auth_error",
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
