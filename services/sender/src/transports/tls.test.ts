import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecureContext, createServer as createTlsServer } from "node:tls";
import type {
  AmqpTarget,
  MqttTarget,
  NatsTarget,
  RedisTarget,
  S3Target,
} from "@herald/contracts/destinations";
import amqp from "amqplib";
import { Redis } from "ioredis";
import { connectAsync, type IPublishPacket } from "mqtt";
import { type Msg, connect as natsConnect } from "nats";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { deadPort } from "../../../../test/support/ports.ts";
import { listen, signer, unique, untilListening } from "./testSupport.ts";
import type { TlsSend, TlsSendResult } from "./tlsSend.fixture.ts";
import type { Message } from "./types.ts";

/**
 * The TLS success paths of amqps://, rediss://, mqtts://, tls:// (NATS) and S3 over https: each
 * transport delivers through TLS to the machine's real server, its certificate signed by a CA
 * of this file's own and issued to host names only the test's resolver knows. Node takes an
 * extra CA only at start (NODE_EXTRA_CA_CERTS), so the sends run in a child process
 * (tlsSend.fixture.ts); the transports get no option of their own. Each test also sends, with
 * the CA trusted, to a name the certificate does not cover, and without the CA to the right
 * one: both fail as tls_error and deliver nothing, so the CA and the URL's host name are what
 * made the first send pass.
 */

const ROOT = join(import.meta.dirname, "..", "..", "..", "..");
const FIXTURE = join(import.meta.dirname, "tlsSend.fixture.ts");

const HOSTS = {
  amqp: "rabbit.herald.test",
  redis: "redis.herald.test",
  mqtt: "mqtt.herald.test",
  nats: "nats.herald.test",
  s3: "s3.herald.test",
};
/** Resolved to 127.0.0.1 like the others, but on no certificate. */
const WRONG_HOST = "wrong.herald.test";

const { secret: SECRET, signed } = signer({ headers: { "x-tenant": "acme" } });
/** Characters beyond ASCII: the body must arrive as its UTF-8 bytes, not re-encoded. */
const message = () => signed({ type: "invoice.paid", data: { note: "café ✓ 日本 🚀" } });

type Pki = { dir: string; caFile: string; ca: string; cert: string; key: string };

/** A test CA and one server certificate for HOSTS' names (and no address), in a directory of their own. */
function makeHostPki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), "herald-tls-"));
  const at = (name: string) => join(dir, name);
  const ssl = (args: string) => execFileSync("openssl", args.split(" "), { cwd: dir, stdio: "pipe" });
  const names = Object.values(HOSTS).map((h) => `DNS:${h}`);
  writeFileSync(at("server.ext"), `subjectAltName=${names.join(",")}\nextendedKeyUsage=serverAuth\n`);
  for (const key of ["ca.key", "server.key"])
    ssl(`genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ${key}`);
  ssl("req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=Herald-TLS-Test-CA");
  ssl(`req -new -key server.key -out server.csr -subj /CN=${HOSTS.amqp}`);
  ssl(
    "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out server.pem -extfile server.ext",
  );
  const read = (name: string) => readFileSync(at(name), "utf8");
  return { dir, caFile: at("ca.pem"), ca: read("ca.pem"), cert: read("server.pem"), key: read("server.key") };
}

let pki: Pki;
beforeAll(() => {
  pki = makeHostPki();
});
afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));

/**
 * TLS in front of a local server: the PKI's certificate whatever name is asked for, the
 * plaintext piped to 127.0.0.1:`upstreamPort`. `names`: the SNI of every ClientHello.
 */
async function tlsRelay(upstreamPort: number) {
  const names: string[] = [];
  const sockets: Socket[] = [];
  const server = createTlsServer(
    {
      cert: pki.cert,
      key: pki.key,
      SNICallback: (name, done) => {
        names.push(name);
        done(null, createSecureContext({ cert: pki.cert, key: pki.key }));
      },
    },
    (client) => {
      const upstream = createConnection(upstreamPort, "127.0.0.1");
      sockets.push(client, upstream);
      client.on("error", () => {});
      upstream.on("error", () => client.destroy());
      client.pipe(upstream).pipe(client);
    },
  );
  // A client that refuses the certificate ends the handshake: no connection, nothing to relay.
  server.on("tlsClientError", () => {});
  const port = await listen(server);
  return {
    port,
    names,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs `sends` in a child process, trusting the test CA or only the system's; one result per send. */
async function sendInChild(sends: TlsSend[], trustTestCa: boolean): Promise<TlsSendResult[]> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  if (trustTestCa) env.NODE_EXTRA_CA_CERTS = pki.caFile;
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], { cwd: ROOT, env });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  child.stdin.end(JSON.stringify(sends));
  const code = await exited;
  if (code !== 0) throw new Error(`the send's process exited with ${code}:\n${err}`);
  const results = out
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as TlsSendResult);
  expect(results).toHaveLength(sends.length);
  return results;
}

/**
 * The target's send with the test CA trusted succeeds; the same to a name off the certificate,
 * and the target's without the CA, fail as tls_error; each resolved its own target's host alone.
 */
async function sendThree(
  target: TlsSend["target"],
  msg: Message,
  credentials: TlsSend["credentials"] = null,
): Promise<Extract<TlsSendResult, { ok: true }>> {
  const wrong = { ...target, host: WRONG_HOST } as TlsSend["target"];
  if (wrong.type === "s3") wrong.endpoint = `https://${WRONG_HOST}:${wrong.port}`;
  const [[sent, offName], [untrusted]] = await Promise.all([
    sendInChild(
      [
        { target, message: msg, credentials },
        { target: wrong, message: message(), credentials },
      ],
      true,
    ),
    sendInChild([{ target, message: message(), credentials }], false),
  ]);
  expect(sent).toMatchObject({ ok: true, resolved: [target.host] });
  const refused = (resolved: string, code: string) => ({
    ok: false,
    kind: "tls_error",
    code,
    resolved: [resolved],
  });
  expect(offName).toMatchObject(refused(WRONG_HOST, "ERR_TLS_CERT_ALTNAME_INVALID"));
  expect(untrusted).toMatchObject(refused(target.host, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"));
  return sent as Extract<TlsSendResult, { ok: true }>;
}

/** The message arrived as sent: the body byte for byte, headers that carry a signature that verifies. */
function expectDelivered(msg: Message, body: Buffer, headers: Record<string, string>): void {
  expect(body.equals(Buffer.from(msg.body, "utf8"))).toBe(true);
  expect(headers["webhook-id"]).toBe(msg.eventId);
  expect(headers["x-tenant"]).toBe("acme");
  const webhook = new Webhook(SECRET);
  expect(webhook.verify(body.toString("utf8"), headers)).toEqual(JSON.parse(msg.body));
  // The check is a real one: another body does not verify.
  expect(() => webhook.verify(body.toString("utf8").replace("café", "cafe"), headers)).toThrow();
}

describe("destinations over TLS, verified with a CA the process was started with", () => {
  it("amqps:// publishes through TLS to RabbitMQ", async () => {
    const relay = await tlsRelay(5672);
    const admin = await amqp.connect("amqp://guest:guest@127.0.0.1:5672");
    const channel = await admin.createChannel();
    const queue = unique();
    try {
      await channel.assertQueue(queue, { durable: false });
      const at = { tls: true, host: HOSTS.amqp, port: relay.port };
      const target: AmqpTarget = { type: "amqp", ...at, vhost: "/", exchange: "", routingKey: queue };
      const msg = message();
      const sent = await sendThree(target, msg, { username: "guest", password: "guest" });
      expect(sent.detail).toBe(`default exchange, routing key ${queue}`);
      expect(new Set(relay.names)).toEqual(new Set([HOSTS.amqp, WRONG_HOST]));

      const got = await channel.get(queue, { noAck: true });
      if (!got) throw new Error(`nothing in ${queue}`);
      expect(got.properties.messageId).toBe(msg.eventId);
      expectDelivered(msg, got.content, got.properties.headers as Record<string, string>);
      expect(await channel.get(queue, { noAck: true })).toBe(false);
    } finally {
      await channel.deleteQueue(queue);
      await admin.close();
      await relay.close();
    }
  });

  it("rediss:// adds a stream entry through TLS to Redis", async () => {
    const relay = await tlsRelay(6379);
    const admin = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true });
    await admin.connect();
    const stream = unique();
    try {
      const at = { tls: true, host: HOSTS.redis, port: relay.port };
      const target: RedisTarget = { type: "redis", ...at, db: 0, stream, maxlen: null };
      const msg = message();
      const sent = await sendThree(target, msg);
      expect(new Set(relay.names)).toEqual(new Set([HOSTS.redis, WRONG_HOST]));

      const entries = await admin.xrangeBuffer(stream, "-", "+");
      expect(entries).toHaveLength(1);
      const [id, flat] = entries[0]!;
      expect(sent.detail).toBe(`stream ${stream}, entry ${id.toString()}`);
      const fields = new Map<string, Buffer>();
      for (let i = 0; i < flat.length; i += 2) fields.set(flat[i]!.toString(), flat[i + 1]!);
      const headers = Object.fromEntries([...fields].map(([name, value]) => [name, value.toString("utf8")]));
      expectDelivered(msg, fields.get("body")!, headers);
    } finally {
      await admin.del(stream);
      admin.disconnect();
      await relay.close();
    }
  });

  it("mqtts:// publishes through TLS to Mosquitto", async () => {
    const relay = await tlsRelay(1883);
    const topic = `herald-test/${randomUUID()}`;
    const subscriber = await connectAsync({
      host: "127.0.0.1",
      port: 1883,
      protocolVersion: 5,
      reconnectPeriod: 0,
    });
    const received: IPublishPacket[] = [];
    subscriber.on("message", (_topic, _payload, packet) => received.push(packet));
    try {
      await subscriber.subscribeAsync(topic, { qos: 1 });
      const at = { tls: true, host: HOSTS.mqtt, port: relay.port };
      const target: MqttTarget = { type: "mqtt", ...at, topic, qos: 1 };
      const msg = message();
      const sent = await sendThree(target, msg);
      expect(sent.detail).toMatch(new RegExp(`^topic ${topic}, QoS 1, packet id [1-9]\\d*$`));
      expect(new Set(relay.names)).toEqual(new Set([HOSTS.mqtt, WRONG_HOST]));

      const packet = await vi.waitFor(() => received[0] ?? Promise.reject(new Error("nothing yet")));
      const headers = packet.properties?.userProperties as Record<string, string>;
      expectDelivered(msg, packet.payload as Buffer, headers);
      expect(received).toHaveLength(1);
    } finally {
      await subscriber.endAsync();
      await relay.close();
    }
  });

  describe("tls:// to a nats-server that requires TLS (it starts TLS after its INFO)", () => {
    let server: ChildProcess;
    let port: number;
    beforeAll(async () => {
      port = await deadPort();
      const tls = ["--tls", "--tlscert", "server.pem", "--tlskey", "server.key"];
      server = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), ...tls], {
        cwd: pki.dir,
        stdio: "ignore",
      });
      await untilListening(port);
    });
    afterAll(() => {
      server?.kill();
    });

    it("publishes through TLS to NATS", async () => {
      // The test's own subscriber speaks TLS too, trusting the CA for the certificate's name
      // (nats.js hands its TLS options to Node's tls.connect, `servername` included).
      const tls = { ca: pki.ca, servername: HOSTS.nats };
      const nc = await natsConnect({ servers: `127.0.0.1:${port}`, tls });
      const subject = unique();
      const received: Msg[] = [];
      nc.subscribe(subject, { callback: (_err, m) => received.push(m) });
      try {
        await nc.flush();
        const target: NatsTarget = { type: "nats", tls: true, host: HOSTS.nats, port, subject };
        const msg = message();
        const sent = await sendThree(target, msg);
        expect(sent.detail).toBe(`subject ${subject} (core NATS, no acknowledgement)`);

        // The publisher's flush came back before its own connection closed; ours follows the message.
        await nc.flush();
        expect(received).toHaveLength(1);
        const m = received[0]!;
        const headers = Object.fromEntries(m.headers!.keys().map((k) => [k, m.headers!.get(k)]));
        expectDelivered(msg, Buffer.from(m.data), headers);
      } finally {
        await nc.close();
      }
    });
  });

  describe("S3 over https to s3rver", () => {
    type S3rver = { run(): Promise<{ port: number }>; close(): Promise<void> };
    const S3rver = createRequire(import.meta.url)("s3rver") as new (options: {
      address: string;
      port: number;
      directory: string;
      silent: boolean;
      vhostBuckets: boolean;
    }) => S3rver;
    let s3: S3rver;
    let s3Port: number;
    let directory: string;
    beforeAll(async () => {
      directory = mkdtempSync(join(tmpdir(), "herald-tls-s3-"));
      // Path-style for any host name: the Host is s3.herald.test, not a bucket's.
      s3 = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true, vhostBuckets: false });
      s3Port = (await s3.run()).port;
    });
    afterAll(async () => {
      await s3?.close();
      rmSync(directory, { recursive: true, force: true });
    });

    it("PUTs the object through TLS", async () => {
      const relay = await tlsRelay(s3Port);
      const base = `http://127.0.0.1:${s3Port}`;
      const bucket = `t-${randomUUID().slice(0, 8)}`;
      expect((await fetch(`${base}/${bucket}`, { method: "PUT" })).status).toBe(200);
      try {
        const at = { endpoint: `https://${HOSTS.s3}:${relay.port}`, host: HOSTS.s3, port: relay.port };
        const target: S3Target = { type: "s3", ...at, bucket, prefix: "webhooks/", region: "us-east-1" };
        const msg = message();
        const sent = await sendThree(target, msg);
        expect(new Set(relay.names)).toEqual(new Set([HOSTS.s3, WRONG_HOST]));

        const key = `webhooks/${msg.eventId}.json`;
        const listing = await (await fetch(`${base}/${bucket}`)).text();
        expect([...listing.matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1])).toEqual([key]);
        const res = await fetch(`${base}/${bucket}/${key}`);
        expect(res.status).toBe(200);
        expect(sent.detail).toBe(`s3://${bucket}/${key}, ETag ${res.headers.get("etag")}`);
        const meta = (n: string) => res.headers.get(`x-amz-meta-${n}`) ?? "";
        const headers = Object.fromEntries(
          ["webhook-id", "webhook-timestamp", "webhook-signature", "x-tenant"].map((n) => [n, meta(n)]),
        );
        expectDelivered(msg, Buffer.from(await res.arrayBuffer()), headers);
        await fetch(`${base}/${bucket}/${key}`, { method: "DELETE" });
      } finally {
        await fetch(`${base}/${bucket}`, { method: "DELETE" });
        await relay.close();
      }
    });
  });
});
