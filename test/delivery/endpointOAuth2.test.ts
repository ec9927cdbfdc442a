import { createServer as createHttpServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthSystem, POLL, readBody as read, startAuthSystem } from "../support/endpointAuth.ts";
import { expectMatches } from "../support/openapi.ts";

/**
 * OAuth2 client credentials to endpoints, against a token server made here and a webhook
 * receiver that takes only its current token. Every delivery is checked with
 * `standardwebhooks`. (Mutual TLS to endpoints: endpointMtls.test.ts.)
 */
let sys: AuthSystem["sys"];
let f: AuthSystem["f"];
let db: AuthSystem["db"];
let verified: AuthSystem["verified"];
let lastAttempt: AuthSystem["lastAttempt"];
let auth: AuthSystem;
let receiver: AuthSystem["receiver"];

/** The token server: what it was asked, and the tokens it gave; `refuse` makes it answer 400. */
const tokenServer = {
  requests: [] as { auth: string | undefined; form: URLSearchParams }[],
  issued: 0,
  refuse: false,
  /** An answer given instead of a token. */
  answer: null as string | null,
};
let valid = new Set<string>();
let tokenUrl = "";

beforeAll(async () => {
  auth = await startAuthSystem();
  ({ sys, f, db, verified, lastAttempt, receiver } = auth);
  const tokens = createHttpServer(async (req, res) => {
    const raw = await read(req);
    const form = new URLSearchParams(raw);
    tokenServer.requests.push({ auth: req.headers.authorization, form });
    // A token server that refuses by repeating the request it read, as some do.
    const echoed = `could not read ${raw} (authorization: ${req.headers.authorization ?? "none"})`;
    if (req.url === "/echo/json") {
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ error: "invalid_request", error_description: echoed }));
      return;
    }
    if (req.url === "/echo/form") {
      res
        .writeHead(400, { "content-type": "application/x-www-form-urlencoded" })
        .end(new URLSearchParams({ error: "invalid_client", error_description: echoed }).toString());
      return;
    }
    if (req.url === "/echo/text") {
      res.writeHead(400, { "content-type": "text/plain" }).end(`Bad request: ${echoed}\n${"x".repeat(2000)}`);
      return;
    }
    if (tokenServer.refuse) {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":"invalid_client"}');
      return;
    }
    if (tokenServer.answer) {
      res.writeHead(200, { "content-type": "application/json" }).end(tokenServer.answer);
      return;
    }
    const token = `tok-${++tokenServer.issued}`;
    valid.add(token);
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: 3600 }));
  });
  tokenUrl = `http://127.0.0.1:${await auth.listen(tokens)}/oauth/token`;
  // The receiver takes only a token the token server gave and did not revoke.
  receiver.on("/api", (r) => {
    const token = String(r.headers.authorization ?? "").replace(/^Bearer /, "");
    return valid.has(token) ? { status: 200 } : { status: 401, body: "token expired" };
  });
}, 60_000);

afterAll(async () => {
  await auth?.close();
});

describe("OAuth2 client credentials", () => {
  it("fetches a token once, caches it, refreshes it on a 401 within the same attempt, and never records it", async () => {
    const ep = await f.endpoint("/api", {
      oauth2: {
        token_url: tokenUrl,
        client_id: "herald app",
        client_secret: "s3cret:&",
        scope: "webhooks.write",
      },
    });
    const shown = (await sys.request("GET", `/v3/endpoints/${ep}`)).body;
    expectMatches(shown, "Endpoint");
    expect(shown.oauth2).toEqual({
      token_url: tokenUrl,
      client_id: "herald app",
      client_secret: "[redacted]",
      scope: "webhooks.write",
      audience: null,
      client_auth: "basic",
    });
    const first = tokenServer.requests.length;
    const events = [];
    for (let n = 1; n <= 3; n++) events.push(await f.send("invoice.paid", { n }));
    for (const id of events) await expect.poll(() => f.status(id, ep), POLL).toBe("succeeded");
    expect(tokenServer.requests.length - first).toBe(1);
    const asked = tokenServer.requests[first]!;
    expect(asked.form.get("grant_type")).toBe("client_credentials");
    expect(asked.form.get("scope")).toBe("webhooks.write");
    // RFC 6749 §2.3.1: id and secret form-encoded, then Basic.
    expect(Buffer.from(asked.auth!.replace(/^Basic /, ""), "base64").toString()).toBe(
      "herald+app:s3cret%3A%26",
    );

    // The token is revoked: the next attempt gets a 401, fetches a new one, and succeeds.
    valid = new Set();
    const later = await f.send("invoice.paid", { n: 4 });
    await expect.poll(() => f.status(later, ep), POLL).toBe("succeeded");
    expect(tokenServer.requests.length - first).toBe(2);
    const attempt = await lastAttempt(later, ep);
    expect(attempt.attempt_number).toBe(1);
    expect(attempt.request.headers.authorization).toBe("[redacted]");
    const delivered = receiver.received("/api").filter((r) => r.headers["webhook-id"] === later);
    expect(delivered.map((r) => r.headers.authorization)).toEqual([
      `Bearer tok-${tokenServer.issued - 1}`,
      `Bearer tok-${tokenServer.issued}`,
    ]);
    expect(await verified(ep, delivered[1]!)).toMatchObject({ data: { n: 4 } });
  });

  it("sends the client's credentials in the form with client_auth post, and keeps the secret on a partial update", async () => {
    const ep = await f.endpoint("/api", {
      oauth2: {
        token_url: tokenUrl,
        client_id: "poster",
        client_secret: "form-secret",
        client_auth: "post",
        audience: "https://api.example",
      },
    });
    const updated = await sys.request("POST", `/v3/endpoints/${ep}`, { json: { oauth2: { scope: "b" } } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.oauth2).toMatchObject({
      client_id: "poster",
      scope: "b",
      client_secret: "[redacted]",
    });
    const first = tokenServer.requests.length;
    const id = await f.send("invoice.paid", { n: 5 });
    await expect.poll(() => f.status(id, ep), POLL).toBe("succeeded");
    const asked = tokenServer.requests[first]!;
    expect(asked.auth).toBeUndefined();
    expect(Object.fromEntries(asked.form)).toMatchObject({
      client_id: "poster",
      client_secret: "form-secret",
      scope: "b",
      audience: "https://api.example",
    });
  });

  it("fails the attempt with auth_error and the token server's answer when no token can be had", async () => {
    receiver.on("/refused", { status: 200 });
    const ep = await f.endpoint("/refused", {
      oauth2: { token_url: tokenUrl, client_id: "refused", client_secret: "x" },
    });
    tokenServer.refuse = true;
    try {
      const id = await f.send("invoice.paid", { n: 6 });
      await expect.poll(() => f.status(id, ep), POLL).toBe("failed");
      const attempt = await lastAttempt(id, ep);
      expect(attempt.error).toBe("auth_error");
      expect(attempt.response_status).toBeNull();
      expect(attempt.response_body).toContain("answered HTTP 400");
      expect(attempt.response_body).toContain("invalid_client");
      expect(receiver.received("/refused")).toEqual([]);
    } finally {
      tokenServer.refuse = false;
    }
  });

  it("sends a saved secret, or a token, only where it was set for: another origin needs the secret again", async () => {
    const ep = await f.endpoint("/api", {
      oauth2: { token_url: tokenUrl, client_id: "kept", client_secret: "only-for-here" },
    });
    const update = (json: object) => sys.request("POST", `/v3/endpoints/${ep}`, { json });
    const elsewhere = "http://localhost:1/oauth/token";
    for (const json of [
      { oauth2: { token_url: elsewhere } },
      { oauth2: { token_url: elsewhere, client_secret: "[redacted]" } },
      { oauth2: { client_id: "another" } },
      { url: "http://localhost:2/api" },
      { url: "http://localhost:2/api", oauth2: { scope: "x" } },
    ]) {
      const res = await update(json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.error.param).toBe("oauth2.client_secret");
    }
    // A token URL that is no URL is told as such, not as a move.
    const ftp = await update({ oauth2: { token_url: "ftp://example.com/token" } });
    expect(ftp.body.error.param).toBe("oauth2.token_url");
    // Any other token URL, on the same origin too (another path there may repeat what it is
    // sent), needs the secret again; the same URL, written otherwise, does not.
    const origin = new URL(tokenUrl).origin;
    for (const token_url of [
      `${origin}/echo/json`,
      `${tokenUrl}?v=2`,
      `${tokenUrl}/`,
      `${tokenUrl}#v2`,
      `${origin}/OAuth/token`,
      `${origin.replace("127.0.0.1", "localhost")}/oauth/token`,
    ]) {
      const res = await update({ oauth2: { token_url } });
      expect(res.status, token_url).toBe(400);
      expect(res.body.error.param).toBe("oauth2.client_secret");
      expect(res.body.error.message).toContain("token URL changes");
    }
    expect(
      (
        await update({
          oauth2: { token_url: tokenUrl.toUpperCase().replace("/OAUTH/TOKEN", "/oauth/token") },
        })
      ).status,
    ).toBe(200);
    expect((await update({ oauth2: { token_url: tokenUrl, scope: "y" } })).status).toBe(200);
    expect((await sys.request("GET", `/v3/endpoints/${ep}`)).body.oauth2.token_url).toBe(tokenUrl);
    // With the secret sent again, or oauth2 removed, the move is made.
    expect((await update({ oauth2: { token_url: `${tokenUrl}?v=2`, client_secret: "again" } })).status).toBe(
      200,
    );
    const moved = await update({ oauth2: { token_url: elsewhere, client_secret: "new" } });
    expect(moved.status).toBe(200);
    expect(moved.body.oauth2.token_url).toBe(elsewhere);
    const away = await update({ url: "http://localhost:2/api", oauth2: null });
    expect(away.status).toBe(200);
    expect(away.body.oauth2).toBeNull();
  });

  it("checks a URL move against the endpoint as it is when the move is written, not as first read", async () => {
    const ep = await f.endpoint("/api");
    // Another update holds the row, and gives it OAuth2 while this one waits.
    await db.query("BEGIN");
    await db.query("SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE", [ep]);
    const move = sys.request("POST", `/v3/endpoints/${ep}`, { json: { url: "http://localhost:3/api" } });
    await expect
      .poll(async () => {
        const { rows } = await sys.gateway.deps.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted",
        );
        return rows[0]!.n;
      }, POLL)
      .toBeGreaterThan(0);
    await db.query(`UPDATE endpoints SET auth = $2 WHERE id = $1`, [
      ep,
      JSON.stringify({ oauth2: { token_url: tokenUrl, client_id: "a", client_secret: "[redacted]" } }),
    ]);
    await db.query("COMMIT");
    const res = await move;
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.param).toBe("oauth2.client_secret");
  });

  it("records of a refusal only its status, error and description, cut short, with the credentials sent scrubbed", async () => {
    const origin = new URL(tokenUrl).origin;
    const secret = "echo-s3cret:&/+ x";
    for (const [path, client_auth, says] of [
      ["/echo/json", "basic", "invalid_request (could not read"],
      ["/echo/json", "post", "invalid_request (could not read"],
      ["/echo/form", "basic", "invalid_client (could not read"],
      ["/echo/form", "post", "invalid_client (could not read"],
      ["/echo/text", "post", null],
    ] as const) {
      receiver.on("/echoed", { status: 200 });
      const ep = await f.endpoint("/echoed", {
        oauth2: { token_url: `${origin}${path}`, client_id: "echoer", client_secret: secret, client_auth },
      });
      const id = await f.send("invoice.paid", { n: 9 });
      await expect.poll(() => f.status(id, ep), POLL).toBe("failed");
      const attempt = await lastAttempt(id, ep);
      const what = `${path} ${client_auth}: ${attempt.response_body}`;
      expect(attempt.error, what).toBe("auth_error");
      expect(attempt.response_status, what).toBeNull();
      // What was sent, in every form the token server may have seen it.
      const formEncoded = encodeURIComponent(secret).replace(/%20/g, "+");
      const basic = Buffer.from(`echoer:${formEncoded}`).toString("base64");
      for (const credential of [
        secret,
        encodeURIComponent(secret),
        new URLSearchParams({ s: secret }).toString().slice(2),
        formEncoded,
        basic,
      ])
        expect(attempt.response_body, what).not.toContain(credential);
      expect(attempt.response_body, what).not.toContain("s3cret");
      expect(attempt.response_body.length, what).toBeLessThanOrEqual(320);
      if (says) {
        expect(attempt.response_body, what).toMatch(/^the token endpoint answered HTTP 400: /);
        expect(attempt.response_body, what).toContain(says);
        if (client_auth === "post") expect(attempt.response_body, what).toContain("client_secret=[redacted]");
        else expect(attempt.response_body, what).toContain("authorization: Basic [redacted]");
      } else expect(attempt.response_body, what).toBe("the token endpoint answered HTTP 400");
    }
  });

  it("reports a token server that cannot be reached as the network's error, which pausing counts", async () => {
    const closed = createHttpServer();
    const port = await auth.listen(closed);
    closed.close();
    receiver.on("/unreached", { status: 200 });
    const ep = await f.endpoint("/unreached", {
      oauth2: { token_url: `http://127.0.0.1:${port}/token`, client_id: "a", client_secret: "b" },
    });
    const id = await f.send("invoice.paid", { n: 7 });
    await expect.poll(() => f.status(id, ep), POLL).toBe("failed");
    const attempt = await lastAttempt(id, ep);
    expect(attempt.error).toBe("connection_error");
    expect(attempt.response_body).toContain("token endpoint could not be reached");
    expect(receiver.received("/unreached")).toEqual([]);
  });

  it("never records a 2xx answer it cannot use: it may hold a token", async () => {
    receiver.on("/mac", { status: 200 });
    const ep = await f.endpoint("/mac", {
      oauth2: { token_url: tokenUrl, client_id: "mac", client_secret: "x" },
    });
    for (const [answer, says] of [
      ['{"access_token":"LIVE-TOKEN-1","token_type":"MAC"}', 'type "MAC"'],
      ['{"access_token":"LIVE TOKEN 2"}', "characters"],
      ["null", "JSON object"],
    ] as const) {
      tokenServer.answer = answer;
      try {
        const id = await f.send("invoice.paid", { n: 8 });
        await expect.poll(() => f.status(id, ep), POLL).toBe("failed");
        const attempt = await lastAttempt(id, ep);
        expect(attempt.error).toBe("auth_error");
        expect(attempt.response_body).toContain(says);
        expect(attempt.response_body).not.toContain("LIVE");
      } finally {
        tokenServer.answer = null;
      }
    }
    expect(receiver.received("/mac")).toEqual([]);
  });

  it("refuses an oauth2 without its secret, or with a token URL that is not http(s), at the param", async () => {
    const create = (oauth2: unknown) =>
      sys.request("POST", "/v3/endpoints", { json: { app: "acme", url: `${receiver.url}/api`, oauth2 } });
    const missing = await create({ token_url: tokenUrl, client_id: "a" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe("oauth2.client_secret");
    const ftp = await create({ token_url: "ftp://example.com/token", client_id: "a", client_secret: "b" });
    expect(ftp.status).toBe(400);
    expect(ftp.body.error.param).toBe("oauth2.token_url");
  });
});
