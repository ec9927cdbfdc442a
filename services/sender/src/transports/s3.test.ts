import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { Agent as HttpAgent, type Server as HttpServer, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { createRequire } from "node:module";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Target } from "@herald/contracts/destinations";
import aws4 from "aws4";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { deadPort } from "../../../../test/support/ports.ts";
import { errorKind } from "../errorKind.ts";
import { configurePools } from "./pool.ts";
import { createS3Transport, objectRequest } from "./s3.ts";
import { closed, context, hangingServer, signer } from "./testSupport.ts";
import { type Message, TransportError } from "./types.ts";

type S3rver = { run(): Promise<AddressInfo>; close(): Promise<void>; httpServer: HttpServer };
const S3rver = createRequire(import.meta.url)("s3rver") as new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
}) => S3rver;

/** The headers an HTTP delivery would carry, signed as deliver.ts signs them. */
const { secret: SECRET, signed } = signer({ headers: { "X-Tenant": "acme" } });
const message = () => signed({ type: "invoice.paid", data: { note: "café ✓" } });

// s3rver's one account; it checks the access key id of a V4 signature, not the signature.
const CREDENTIALS = { username: "S3RVER", password: "S3RVER" };

let directory: string;
let server: S3rver;
let port: number;
const transports: ReturnType<typeof createS3Transport>[] = [];
const buckets: string[] = [];

beforeAll(async () => {
  // Every connection idle at once after its send: the bound closes the oldest (pool.test.ts has the rule).
  configurePools({ busyMs: 0 });
  directory = await mkdtemp(join(tmpdir(), "herald-s3-"));
  server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
  port = (await server.run()).port;
});

afterAll(async () => {
  await server.close();
  await rm(directory, { recursive: true, force: true });
});

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  for (const bucket of buckets.splice(0)) {
    const listing = await (await fetch(`${base()}/${bucket}`)).text();
    for (const [, key] of listing.matchAll(/<Key>([^<]+)<\/Key>/g))
      await fetch(`${base()}/${bucket}/${key!}`, { method: "DELETE" });
    await fetch(`${base()}/${bucket}`, { method: "DELETE" });
  }
});

const base = () => `http://127.0.0.1:${port}`;

function transport(options: Parameters<typeof createS3Transport>[0] = {}) {
  const t = createS3Transport(options);
  transports.push(t);
  return t;
}

async function bucket(): Promise<string> {
  const name = `t-${randomUUID().slice(0, 8)}`;
  const res = await fetch(`${base()}/${name}`, { method: "PUT" });
  expect(res.status).toBe(200);
  buckets.push(name);
  return name;
}

/**
 * The endpoint's host is a name no DNS answers: the send reaches s3rver only by connecting to
 * the address `resolve` returned. (s3rver reads `s3.<anything>.amazonaws.com` as path-style.)
 */
const HOST = "s3.herald-test.amazonaws.com";

function target(bucketName: string, over: Partial<S3Target> = {}): S3Target {
  return {
    type: "s3",
    bucket: bucketName,
    prefix: "webhooks/orders/",
    endpoint: `http://${HOST}:${port}`,
    region: "us-east-1",
    host: HOST,
    port,
    ...over,
  };
}

/** What reached s3rver: each request's method, path and headers (its body is left to s3rver). */
function recordRequests(): IncomingMessage[] {
  const seen: IncomingMessage[] = [];
  const listener = (req: IncomingMessage) => seen.push(req);
  server.httpServer.prependListener("request", listener);
  onTestFinished(() => void server.httpServer.off("request", listener));
  return seen;
}

function countConnections(on: { on(event: "connection", l: (s: Socket) => void): unknown }): Socket[] {
  const sockets: Socket[] = [];
  on.on("connection", (s: Socket) => sockets.push(s));
  return sockets;
}

describe("the S3 transport", () => {
  it("PUTs the object an independent client reads back: the body byte for byte, a signature that verifies", async () => {
    const name = await bucket();
    const seen = recordRequests();
    const sent = message();
    const ctx = context();
    const receipt = await transport().send(target(name), sent, ctx);

    const key = `webhooks/orders/${sent.eventId}.json`;
    const res = await fetch(`${base()}/${name}/${key}`);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(Buffer.from(sent.body, "utf8"))).toBe(true);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(receipt.detail).toBe(`s3://${name}/${key}, ETag ${res.headers.get("etag")}`);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);

    // The consumer verifies from the object's metadata as an HTTP receiver does from its headers.
    const meta = (n: string) => res.headers.get(`x-amz-meta-${n}`) ?? "";
    const headers = {
      "webhook-id": meta("webhook-id"),
      "webhook-timestamp": meta("webhook-timestamp"),
      "webhook-signature": meta("webhook-signature"),
    };
    expect(headers["webhook-id"]).toBe(sent.eventId);
    expect(new Webhook(SECRET).verify(bytes.toString("utf8"), headers)).toEqual(JSON.parse(sent.body));
    expect(meta("x-tenant")).toBe("acme");

    // Connected to the address the guard resolved, the name kept as Host; unsigned without credentials.
    expect(ctx.resolved).toEqual([HOST]);
    const put = seen.find((r) => r.method === "PUT")!;
    expect(put.headers.host).toBe(`${HOST}:${port}`);
    expect(put.url).toBe(`/${name}/${key}`);
    expect(put.headers.authorization).toBeUndefined();
  });

  it("a refused object is `rejected`, with S3's error code", async () => {
    const missing = `t-${randomUUID().slice(0, 8)}`;
    const error = await transport()
      .send(target(missing), message(), context())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).kind).toBe("rejected");
    expect((error as TransportError).message).toMatch(
      /^S3 refused s3:\/\/t-\w+\/webhooks\/orders\/evt_\w+\.json \(404 NoSuchBucket: /,
    );
  });

  it("a closed port is a connection_error", async () => {
    const closedPort = await deadPort();
    const error = await transport()
      .send(
        target("orders", { endpoint: `http://127.0.0.1:${closedPort}`, host: "127.0.0.1", port: closedPort }),
        message(),
        context(),
      )
      .catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe("ECONNREFUSED");
    expect(errorKind(error)).toBe("connection_error");
  });

  describe("a destination that accepts and never answers", () => {
    let hanging: Awaited<ReturnType<typeof hangingServer>>;
    let hangingPort: number;
    beforeAll(async () => {
      hanging = await hangingServer();
      hangingPort = hanging.port;
    });
    afterAll(() => hanging.close());

    it("times out at the signal, drops the half-open connection, and holds no other destination", async () => {
      const name = await bucket();
      const sockets = hanging.sockets;
      const t = transport();
      const stuck = target("orders", {
        endpoint: `http://127.0.0.1:${hangingPort}`,
        host: "127.0.0.1",
        port: hangingPort,
      });

      const first = await t
        .send(stuck, message(), context({ signal: AbortSignal.timeout(300) }))
        .catch((e: unknown) => e);
      expect(first).toBeInstanceOf(TransportError);
      expect((first as TransportError).kind).toBe("timeout");
      expect(sockets).toHaveLength(1);
      // The timed-out connection is closed from our side, not kept for the next attempt.
      await closed(sockets[0]!);

      // The next attempt connects again; while it hangs, another destination's send completes.
      const controller = new AbortController();
      let settled = false;
      const second = t
        .send(stuck, message(), context({ signal: controller.signal }))
        .catch((e: unknown) => e)
        .finally(() => {
          settled = true;
        });
      while (sockets.length < 2) await new Promise((r) => setTimeout(r, 10));
      const receipt = await t.send(target(name), message(), context());
      expect(receipt.detail).toMatch(new RegExp(`^s3://${name}/`));
      expect(settled).toBe(false);
      controller.abort();
      const error = await second;
      expect((error as TransportError).kind).toBe("timeout");
      await closed(sockets[1]!);
    });
  });

  it("signs with the URL's credentials (AWS Signature V4), and a refused key is an auth_error without them in it", async () => {
    const name = await bucket();
    const seen = recordRequests();
    const sent = message();
    await transport().send(
      target(name, { region: "eu-west-1" }),
      sent,
      context({ credentials: CREDENTIALS }),
    );

    const put = seen.find((r) => r.method === "PUT")!;
    const authorization = String(put.headers.authorization);
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=S3RVER\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=[^,]*x-amz-meta-webhook-signature[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(put.headers["x-amz-content-sha256"]).toBe(createHash("sha256").update(sent.body).digest("hex"));
    // Signed over what went on the wire: the same request, signed again from what s3rver received, matches.
    const signedNames = /SignedHeaders=([^,]+)/.exec(authorization)![1]!.split(";");
    const received = Object.fromEntries(signedNames.map((n) => [n, String(put.headers[n])]));
    const again = aws4.sign(
      {
        host: received.host,
        path: put.url,
        method: "PUT",
        service: "s3",
        region: "eu-west-1",
        headers: received,
        body: sent.body,
      },
      { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    );
    expect(again.headers!.Authorization).toBe(authorization);

    const wrong = { username: "NOT-A-KEY-4f2a", password: "secret-9c1e7d" };
    const error = await transport()
      .send(target(name), message(), context({ credentials: wrong }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).kind).toBe("auth_error");
    expect((error as TransportError).message).toContain("403 InvalidAccessKeyId");
    expect((error as TransportError).message).not.toContain(wrong.username);
    expect((error as TransportError).message).not.toContain(wrong.password);
  });

  it("keeps one connection per destination across sends, evicts past the bound, and close() closes it", async () => {
    const name = await bucket();
    const sockets = countConnections(server.httpServer);
    const t = transport({ maxConnections: 1 });
    await t.send(target(name), message(), context());
    await t.send(target(name), message(), context());
    expect(sockets).toHaveLength(1);

    // Other credentials are another destination: with a bound of 1, the first one's is closed.
    await t.send(target(name), message(), context({ credentials: CREDENTIALS }));
    expect(sockets).toHaveLength(2);
    await closed(sockets[0]!);
    expect(sockets[1]!.closed).toBe(false);

    await t.close();
    await closed(sockets[1]!);
    expect(sockets.every((s) => s.closed)).toBe(true);
  });
  it("goes through the sender's egress agents when given them, which close() leaves to their owner", async () => {
    const name = await bucket();
    const http = new HttpAgent({ keepAlive: true });
    const https = new HttpsAgent({ keepAlive: true });
    const asked: number[] = [];
    const t = transport({
      agent: (timeoutMs) => {
        asked.push(timeoutMs);
        return { http, https };
      },
    });
    await t.send(target(name), message(), context());
    expect(asked).toEqual([10_000]);
    expect(Object.values(http.freeSockets).flat()).toHaveLength(1);
    await t.close();
    expect(Object.values(http.freeSockets).flat()).toHaveLength(1);
    http.destroy();
    https.destroy();
  });
});

describe("objectRequest", () => {
  const sent: Message = { eventId: "evt_1", body: "{}", headers: { "Webhook-Id": "evt_1" } };
  const aws: S3Target = {
    type: "s3",
    bucket: "orders",
    prefix: "in/",
    endpoint: null,
    region: "eu-west-1",
    host: "s3.eu-west-1.amazonaws.com",
    port: 443,
  };

  it.each([
    ["AWS: virtual-hosted, TLS", aws, "https://orders.s3.eu-west-1.amazonaws.com/in/evt_1.json"],
    [
      "AWS, a bucket with a dot: path-style (the wildcard certificate does not cover it)",
      { ...aws, bucket: "orders.acme" },
      "https://s3.eu-west-1.amazonaws.com/orders.acme/in/evt_1.json",
    ],
    [
      "an endpoint: path-style, its port",
      { ...aws, endpoint: "http://minio.local:9000", host: "minio.local", port: 9000 },
      "http://minio.local:9000/orders/in/evt_1.json",
    ],
    [
      "an IPv6 endpoint on its scheme's port",
      { ...aws, endpoint: "https://[fd00::1]", host: "fd00::1", port: 443 },
      "https://[fd00::1]/orders/in/evt_1.json",
    ],
    [
      "a prefix needing escapes: each segment RFC 3986-encoded, slashes kept",
      { ...aws, prefix: "a b/(x)+y/" },
      "https://orders.s3.eu-west-1.amazonaws.com/a%20b/%28x%29%2By/evt_1.json",
    ],
  ])("%s", (_, t, url) => {
    const request = objectRequest(t, sent, null);
    expect(request.url.href).toBe(url);
    expect(request.key).toBe(`${t.prefix}evt_1.json`);
    expect(request.headers).toEqual({ "content-type": "application/json", "x-amz-meta-webhook-id": "evt_1" });
  });
});
