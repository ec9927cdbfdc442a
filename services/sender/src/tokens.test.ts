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

  it("tells of a refusal only its error and description, cut short, with the secret sent scrubbed", async () => {
    let answer = { type: "application/json", body: "" };
    let asked = { auth: "", form: "" };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        asked = { auth: req.headers.authorization ?? "", form: Buffer.concat(chunks).toString() };
        const body = answer.body
          .replace("{form}", asked.form)
          .replace("{auth}", asked.auth)
          .replace("{encoded}", encodeURIComponent(`${asked.form} ${asked.auth}`));
        res.writeHead(401, { "content-type": answer.type }).end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    const client = got.extend({ retry: { limit: 0 }, throwHttpErrors: false });
    const secret = "Pa ss:/&+é";
    const refused = async (client_auth: "basic" | "post") => {
      const tokens = new TokenCache(5000);
      const oauth2 = { token_url: url, client_id: "id", client_secret: secret, client_auth };
      const err = await tokens.token("ep_3", oauth2, client, true, false).catch((e: Error) => e);
      expect(err).toMatchObject({ code: "HERALD_AUTH_ERROR", kind: "auth_error" });
      return (err as Error).message;
    };
    const json = (o: object) => ({ type: "application/json", body: JSON.stringify(o) });
    try {
      answer = json({ error: "invalid_client", error_description: "got {form} and {auth}" });
      expect(await refused("post")).toBe(
        "the token endpoint answered HTTP 401: invalid_client (got grant_type=client_credentials&client_id=id&client_secret=[redacted] and)",
      );
      expect(await refused("basic")).toBe(
        "the token endpoint answered HTTP 401: invalid_client (got grant_type=client_credentials and Basic [redacted])",
      );
      // Decoded, in any case, the secret is scrubbed too.
      answer = json({ error: "invalid_client", error_description: `no client for ${secret.toUpperCase()}` });
      expect(await refused("post")).toBe(
        "the token endpoint answered HTTP 401: invalid_client (no client for [redacted])",
      );
      // Form-encoded, as some servers answer.
      answer = {
        type: "application/x-www-form-urlencoded",
        body: "error=invalid_request&error_description=bad+{encoded}",
      };
      expect(await refused("post")).toBe(
        "the token endpoint answered HTTP 401: invalid_request (bad grant_type=client_credentials&client_id=id&client_secret=[redacted])",
      );
      // Cut short, control characters as spaces; an error alone; and nothing of anything else.
      answer = json({ error: `e\n${"r".repeat(100)}`, error_description: "d".repeat(1000) });
      const long = await refused("basic");
      expect(long).toBe(`the token endpoint answered HTTP 401: e ${"r".repeat(61)}… (${"d".repeat(199)}…)`);
      answer = json({ error: "unauthorized_client" });
      expect(await refused("basic")).toBe("the token endpoint answered HTTP 401: unauthorized_client");
      for (const body of ["<html>{form} {auth}</html>", "{form}", '{"message":"{auth}"}', '["{auth}"]', ""]) {
        answer = { type: "text/html", body };
        expect(await refused("post"), body).toBe("the token endpoint answered HTTP 401");
        expect(await refused("basic"), body).toBe("the token endpoint answered HTTP 401");
      }
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
