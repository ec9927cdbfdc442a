import { X509Certificate } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { endpointAuthContext } from "@herald/db";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectMatches } from "../support/openapi.ts";
import { makePki, selfSignedWith, type TestPki, unreadableExpiry } from "../support/pki.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Authentication to endpoints, against servers made here: a mutual-TLS server that asks for a
 * client certificate from the test CA, and an OAuth2 token server with a webhook receiver that
 * takes only its current token. Every delivery is checked with `standardwebhooks`.
 */
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
let pki: TestPki;
let db: pg.Client;
const servers: Server[] = [];
const POLL = { timeout: 15_000, interval: 100 };

type Got = { path: string; headers: IncomingMessage["headers"]; body: string; clientCn: string | null };
const mtlsGot: Got[] = [];
let mtlsUrl = "";

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

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  pki = makePki();
  sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  receiver = await startReceiver();
  await setupApp(sys, ["invoice.paid"]);
  f = fixtures(sys, receiver);

  const mtls = createHttpsServer(
    { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
    async (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      mtlsGot.push({
        path: req.url ?? "/",
        headers: req.headers,
        body: await read(req),
        clientCn: peer?.subject?.CN ? String(peer.subject.CN) : null,
      });
      res.writeHead(200).end("ok");
    },
  );
  mtlsUrl = `https://127.0.0.1:${await listen(mtls)}`;

  const tokens = createHttpServer(async (req, res) => {
    const form = new URLSearchParams(await read(req));
    tokenServer.requests.push({ auth: req.headers.authorization, form });
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
  tokenUrl = `http://127.0.0.1:${await listen(tokens)}/oauth/token`;
  // The receiver takes only a token the token server gave and did not revoke.
  receiver.on("/api", (r) => {
    const token = String(r.headers.authorization ?? "").replace(/^Bearer /, "");
    return valid.has(token) ? { status: 200 } : { status: 401, body: "token expired" };
  });
}, 60_000);

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await db?.end();
  await sys?.close();
  await receiver?.close();
});

const verified = async (endpointId: string, got: { headers: IncomingMessage["headers"]; body: string }) => {
  const secret = (await sys.request("GET", `/v3/endpoints/${endpointId}/secret`)).body.secret as string;
  return new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
};
const lastAttempt = async (eventId: string, endpointId: string) => {
  const list = (await sys.request("GET", `/v3/attempts?event=${eventId}&endpoint=${endpointId}`)).body.data;
  return (await sys.request("GET", `/v3/attempts/${list[0].id}`)).body;
};

describe("mutual TLS", () => {
  it("presents the endpoint's client certificate and trusts its CA; the key is never shown nor stored in the clear", async () => {
    const ep = await f.endpoint("", {
      url: `${mtlsUrl}/hooks`,
      tls: { client_certificate: pki.client.cert, client_key: pki.client.key, ca_certificate: pki.ca },
    });
    const shown = (await sys.request("GET", `/v3/endpoints/${ep}`)).body;
    expectMatches(shown, "Endpoint");
    expect(shown.tls.client_certificate.subject).toContain("CN=herald-client");
    expect(shown.tls.client_certificate.issuer).toContain("CN=Herald Test CA");
    expect(shown.tls.client_key).toBe("[redacted]");
    expect(shown.tls.ca_certificate.subject).toContain("CN=Herald Test CA");
    expect(JSON.stringify(shown)).not.toContain("PRIVATE KEY");
    const row = await db.query("SELECT auth::text, auth_sealed FROM endpoints WHERE id = $1", [ep]);
    expect(`${row.rows[0].auth}${row.rows[0].auth_sealed}`).not.toContain("PRIVATE KEY");

    const eventId = await f.send("invoice.paid", { n: 1 });
    await expect.poll(() => f.status(eventId, ep), POLL).toBe("succeeded");
    const got = mtlsGot.find((g) => g.headers["webhook-id"] === eventId)!;
    expect(got.clientCn).toBe("herald-client");
    expect(await verified(ep, got)).toMatchObject({ data: { n: 1 } });
  });

  it("fails the attempt with tls_error when the server is not trusted or refuses the certificate", async () => {
    // No CA: the test CA's server certificate is not among the public roots.
    const untrusted = await f.endpoint("", {
      url: `${mtlsUrl}/untrusted`,
      tls: { client_certificate: pki.client.cert, client_key: pki.client.key },
    });
    // A certificate from a CA the server does not trust.
    const stranger = await f.endpoint("", {
      url: `${mtlsUrl}/stranger`,
      tls: { client_certificate: pki.stranger.cert, client_key: pki.stranger.key, ca_certificate: pki.ca },
    });
    const eventId = await f.send("invoice.paid", { n: 2 });
    for (const ep of [untrusted, stranger])
      await expect.poll(() => f.status(eventId, ep), POLL).toBe("failed");
    expect((await lastAttempt(eventId, untrusted)).error).toBe("tls_error");
    expect(["tls_error", "connection_error"]).toContain((await lastAttempt(eventId, stranger)).error);
    expect(mtlsGot.filter((g) => g.path !== "/hooks")).toEqual([]);
  });

  it("refuses a key that is not the certificate's, a certificate without its key, and what is not PEM, each at its param", async () => {
    const create = (tls: unknown) =>
      sys.request("POST", "/v3/endpoints", { json: { app: "acme", url: `${mtlsUrl}/x`, tls } });
    const cases: [unknown, string][] = [
      [{ client_certificate: pki.client.cert, client_key: pki.stranger.key }, "tls.client_key"],
      [{ client_certificate: pki.client.cert }, "tls.client_key"],
      [{ client_key: pki.client.key }, "tls.client_certificate"],
      [{ client_certificate: "hello", client_key: pki.client.key }, "tls.client_certificate"],
      [
        { ca_certificate: "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----" },
        "tls.ca_certificate",
      ],
    ];
    for (const [tls, param] of cases) {
      const res = await create(tls);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
  });
});

describe("TLS material", () => {
  const create = (tls: unknown) =>
    sys.request("POST", "/v3/endpoints", { json: { app: "acme", url: `${mtlsUrl}/x`, tls } });
  const saved = async (id: string) => {
    const { rows } = await db.query<{ auth_sealed: string }>(
      "SELECT auth_sealed FROM endpoints WHERE id = $1",
      [id],
    );
    return JSON.parse(sys.gateway.deps.secrets.open(rows[0]!.auth_sealed, endpointAuthContext(id)));
  };

  it("keeps only the PEM blocks it read, re-encoded: text around them is dropped", async () => {
    const res = await create({
      client_certificate: `Bag Attributes\n    friendlyName: herald\nsubject=CN = herald-client\n${pki.client.cert}\ntrailing notes`,
      client_key: `Key Attributes: <No Attributes>\n${pki.client.key}`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const tls = (await saved(res.body.id)).tls;
    expect(tls.certificate).toBe(new X509Certificate(pki.client.cert).toString());
    expect(tls.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
  });

  it("refuses a broken block behind a good one, a key of an odd type or size, and an unreadable expiry, at the param", async () => {
    const rsa1024 = selfSignedWith("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024");
    const ed448 = selfSignedWith("-algorithm", "ED448");
    const broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    const cases: [unknown, string, string][] = [
      [
        { client_certificate: pki.client.cert + broken, client_key: pki.client.key },
        "tls.client_certificate",
        "Certificate 2",
      ],
      [{ ca_certificate: pki.ca + pki.client.key }, "tls.ca_certificate", "only certificates"],
      [{ client_certificate: rsa1024.cert, client_key: rsa1024.key }, "tls.client_key", "rsa of 1024 bits"],
      [{ client_certificate: ed448.cert, client_key: ed448.key }, "tls.client_key", "ed448"],
      [
        { client_certificate: pki.client.cert, client_key: pki.client.key + pki.server.key },
        "tls.client_key",
        "one PEM private key",
      ],
      [{ ca_certificate: unreadableExpiry(pki.ca) }, "tls.ca_certificate", "cannot be read"],
    ];
    for (const [tls, param, says] of cases) {
      const res = await create(tls);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.param).toBe(param);
      expect(res.body.error.message).toContain(says);
    }
  });
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
    // The same origin keeps it; with the secret sent again, or oauth2 removed, the move is made.
    expect((await update({ oauth2: { token_url: `${tokenUrl}?v=2` } })).status).toBe(200);
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

  it("reports a token server that cannot be reached as the network's error, which pausing counts", async () => {
    const closed = createHttpServer();
    const port = await listen(closed);
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
