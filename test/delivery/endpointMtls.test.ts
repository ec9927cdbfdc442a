import { X509Certificate } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { TLSSocket } from "node:tls";
import { endpointAuthContext } from "@herald/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthSystem, POLL, readBody as read, startAuthSystem } from "../support/endpointAuth.ts";
import { expectMatches } from "../support/openapi.ts";
import { makePki, selfSignedWith, type TestPki, unreadableExpiry } from "../support/pki.ts";

/**
 * Mutual TLS to endpoints, against a server made here that asks for a client certificate from
 * the test CA; and what TLS material the API takes. Every delivery is checked with
 * `standardwebhooks`. (OAuth2 to endpoints: endpointOAuth2.test.ts.)
 */
let sys: AuthSystem["sys"];
let f: AuthSystem["f"];
let db: AuthSystem["db"];
let verified: AuthSystem["verified"];
let lastAttempt: AuthSystem["lastAttempt"];
let auth: AuthSystem;
let pki: TestPki;

type Got = { path: string; headers: IncomingMessage["headers"]; body: string; clientCn: string | null };
const mtlsGot: Got[] = [];
let mtlsUrl = "";

beforeAll(async () => {
  pki = makePki();
  auth = await startAuthSystem();
  ({ sys, f, db, verified, lastAttempt } = auth);
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
  mtlsUrl = `https://127.0.0.1:${await auth.listen(mtls)}`;
}, 60_000);

afterAll(async () => {
  await auth?.close();
});

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
