import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import type { MqttTarget } from "@herald/contracts/destinations";
import { connectAsync, type IPublishPacket, type MqttClient } from "mqtt";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { makePki } from "../../../../test/support/pki.ts";
import { deadPort } from "../../../../test/support/ports.ts";
import { errorKind } from "../errorKind.ts";
import { createMqttTransport } from "./mqtt.ts";
import {
  context,
  failure,
  hangingServer,
  listen,
  newSecret,
  relay,
  signer,
  untilListening,
} from "./testSupport.ts";
import { TransportError } from "./types.ts";

/**
 * Against the machine's Mosquitto (127.0.0.1:1883, anonymous), and for credentials and a packet
 * size limit, a Mosquitto of this file's own with a password file. Each test publishes to its
 * own topic (nothing is retained, so nothing is left to clean up).
 */
const MOSQUITTO = { host: "127.0.0.1", port: 1883 };
/** A name that resolves nowhere: only the address `resolve` returns can be connected to. */
const HOST = "mqtt.herald.test";

const topic = () => `herald-test/${randomUUID()}`;
const target = (port: number, qos: 1 | 2 = 1, name = topic()): MqttTarget => ({
  type: "mqtt",
  tls: false,
  host: HOST,
  port,
  topic: name,
  qos,
});

/** Messages as deliver.ts builds them for an endpoint with a custom header. */
const TENANT = { "x-tenant": "acme" };
const { signed } = signer({ headers: TENANT });

/** An independent MQTT 5 client subscribed to a topic, keeping what arrives. */
async function subscriber(
  topicName: string,
  port = MOSQUITTO.port,
  credentials: { username: string; password: string } | null = null,
) {
  const client: MqttClient = await connectAsync({
    host: MOSQUITTO.host,
    port,
    protocolVersion: 5,
    reconnectPeriod: 0,
    ...(credentials ?? {}),
  });
  const received: IPublishPacket[] = [];
  client.on("message", (_topic, _payload, packet) => received.push(packet));
  await client.subscribeAsync(topicName, { qos: 2 });
  return {
    received,
    next: () => vi.waitFor(() => received[0] ?? Promise.reject(new Error("nothing yet")), { timeout: 5000 }),
    close: () => client.endAsync(),
  };
}

describe("the MQTT transport", () => {
  it.each([1, 2] as const)(
    "publishes at QoS %i: the body byte for byte, the headers as user properties, and the signature verifies",
    async (qos) => {
      const transport = createMqttTransport();
      const to = target(MOSQUITTO.port, qos);
      const consumer = await subscriber(to.topic);
      try {
        const { secret, signed: sign } = signer({ headers: TENANT });
        // Multi-byte characters: the payload must be the body's UTF-8 bytes, not re-encoded.
        const message = sign({ type: "invoice.paid", data: { id: "inv_1", note: "Grüße 🎉" } });
        const body = message.body;
        const ctx = context();
        const receipt = await transport.send(to, message, ctx);
        expect(receipt.detail).toMatch(new RegExp(`^topic ${to.topic}, QoS ${qos}, packet id [1-9]\\d*$`));
        expect(ctx.resolved).toEqual([HOST]);

        const packet = await consumer.next();
        expect(Buffer.compare(packet.payload as Buffer, Buffer.from(body, "utf8"))).toBe(0);
        const properties = packet.properties!;
        expect(properties.userProperties).toEqual(message.headers);
        expect(properties.contentType).toBe("application/json");
        expect(properties.correlationData?.toString()).toBe(message.eventId);
        expect(properties.payloadFormatIndicator).toBe(true);

        const headers = properties.userProperties as Record<string, string>;
        const webhook = new Webhook(secret);
        expect(webhook.verify((packet.payload as Buffer).toString("utf8"), headers)).toEqual(
          JSON.parse(body),
        );
        // The check can fail: another body, or another secret, does not verify.
        expect(() => webhook.verify(body.replace("inv_1", "inv_2"), headers)).toThrow();
        expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
      } finally {
        await consumer.close();
        await transport.close();
      }
    },
  );

  it("is rejected when the server refuses the PUBLISH, and the connection stays for the next", async () => {
    const transport = createMqttTransport();
    try {
      // Mosquitto refuses clients' publishes under $SYS: a PUBACK with 0x87 Not authorized.
      const refused = target(MOSQUITTO.port, 1, `$SYS/herald-test/${randomUUID()}`);
      const err = await failure(transport.send(refused, signed({}), context()));
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).kind).toBe("rejected");
      expect(err.message).toContain("Not authorized (0x87)");
      expect(transport.connections).toBe(1);

      const receipt = await transport.send(target(MOSQUITTO.port), signed({}), context());
      expect(receipt.detail).toMatch(/^topic herald-test\/.+, QoS 1, packet id \d+$/);
      expect(transport.connections).toBe(1);
    } finally {
      await transport.close();
    }
  });

  it("fails as a connection error on a port nothing listens on, and keeps no connection", async () => {
    const transport = createMqttTransport();
    try {
      const err = await failure(transport.send(target(await deadPort()), signed({}), context()));
      expect(errorKind(err)).toBe("connection_error");
      expect((err as { code?: string }).code).toBe("ECONNREFUSED");
      expect(transport.connections).toBe(0);
    } finally {
      await transport.close();
    }
  });

  it("times out on a server that never answers, without holding up another destination", async () => {
    const hanging = await hangingServer();
    const hangingPort = hanging.port;
    const transport = createMqttTransport();
    try {
      const attempt = new AbortController();
      let settled = false;
      const stuck = transport.send(target(hangingPort), signed({}), context({ signal: attempt.signal }));
      stuck.then(
        () => (settled = true),
        () => (settled = true),
      );
      await vi.waitFor(() => expect(hanging.open()).toBe(1));

      // Another destination is published to while the first still waits for its CONNACK.
      const receipt = await transport.send(target(MOSQUITTO.port), signed({}), context());
      expect(receipt.detail).toContain("packet id");
      expect(settled).toBe(false);

      attempt.abort();
      const err = await failure(stuck);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).kind).toBe("timeout");
      // The half-open connection is closed and forgotten; the working one stays.
      await vi.waitFor(() => expect(hanging.open()).toBe(0));
      expect(transport.connections).toBe(1);

      // The same with a deadline of its own.
      const late = await failure(
        transport.send(target(hangingPort), signed({}), context({ signal: AbortSignal.timeout(200) })),
      );
      expect((late as TransportError).kind).toBe("timeout");
      await vi.waitFor(() => expect(hanging.open()).toBe(0));
    } finally {
      await transport.close();
      await hanging.close();
    }
  });

  it("speaks TLS for mqtts://: the URL's host as SNI, the certificate verified", async () => {
    // Signed by a CA of the test's own, which the transport does not trust.
    const pki = makePki();
    const names: string[] = [];
    const server = createTlsServer({
      cert: pki.server.cert,
      key: pki.server.key,
      SNICallback: (name, done) => {
        names.push(name);
        done(null, undefined);
      },
    });
    const port = await listen(server);
    const transport = createMqttTransport();
    try {
      const ctx = context();
      const err = await failure(transport.send({ ...target(port), tls: true }, signed({}), ctx));
      expect(ctx.resolved).toEqual([HOST]);
      expect(names).toEqual([HOST]);
      expect(errorKind(err)).toBe("tls_error");
      expect(transport.connections).toBe(0);
    } finally {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("drops a connection that stopped acknowledging, and the next send reconnects", async () => {
    const proxy = await relay(MOSQUITTO.port);
    const transport = createMqttTransport();
    try {
      await transport.send(target(proxy.port), signed({}), context());
      expect(proxy.sockets).toHaveLength(1);

      proxy.silence();
      const err = await failure(
        transport.send(target(proxy.port), signed({}), context({ signal: AbortSignal.timeout(300) })),
      );
      expect((err as TransportError).kind).toBe("timeout");
      expect(transport.connections).toBe(0);
      await vi.waitFor(() => expect(proxy.open()).toBe(0));

      const receipt = await transport.send(target(proxy.port), signed({}), context());
      expect(receipt.detail).toContain("packet id");
      expect(proxy.sockets).toHaveLength(2);
    } finally {
      await transport.close();
      await proxy.close();
    }
  });

  it("reuses one connection per destination and credentials, and close() closes them", async () => {
    const proxy = await relay(MOSQUITTO.port);
    const transport = createMqttTransport();
    try {
      await transport.send(target(proxy.port), signed({}), context());
      await transport.send(target(proxy.port, 2), signed({}), context());
      // Sends that arrive while it is being opened wait for the same one.
      await Promise.all([1, 2, 3].map(() => transport.send(target(proxy.port), signed({}), context())));
      expect(proxy.sockets).toHaveLength(1);
      expect(transport.connections).toBe(1);

      // Other credentials are another connection (this Mosquitto takes any).
      const credentials = { username: "someone", password: "else" };
      await transport.send(target(proxy.port), signed({}), context({ credentials }));
      expect(proxy.sockets).toHaveLength(2);
      expect(transport.connections).toBe(2);

      await transport.close();
      expect(transport.connections).toBe(0);
      await vi.waitFor(() => expect(proxy.open()).toBe(0));
    } finally {
      await transport.close();
      await proxy.close();
    }
  });

  it("keeps to the server's Receive Maximum: 60 QoS 2 sends at once on one connection all succeed", async () => {
    // Mosquitto takes 20 QoS 2 publishes in flight; the 21st would be refused "Quota exceeded".
    const transport = createMqttTransport();
    const to = target(MOSQUITTO.port, 2);
    const consumer = await subscriber(to.topic);
    try {
      const messages = Array.from({ length: 60 }, (_, i) => signed({ i }));
      const receipts = await Promise.all(messages.map((m) => transport.send(to, m, context())));
      expect(receipts).toHaveLength(60);
      expect(transport.connections).toBe(1);
      await vi.waitFor(() => expect(consumer.received).toHaveLength(60), { timeout: 5000 });
      const ids = consumer.received.map((p) => p.properties?.correlationData?.toString()).sort();
      expect(ids).toEqual(messages.map((m) => m.eventId).sort());
    } finally {
      await consumer.close();
      await transport.close();
    }
  });
});

describe("the MQTT transport with a server that wants credentials", () => {
  const credentials = { username: "herald", password: "s3cr:et/pw" };
  let server: ChildProcess;
  let dir: string;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "herald-mqtt-"));
    // Mosquitto started as root reads its files as the user `mosquitto`.
    await chmod(dir, 0o755);
    const passwords = join(dir, "passwd");
    execFileSync("mosquitto_passwd", ["-b", "-c", passwords, credentials.username, credentials.password]);
    await chmod(passwords, 0o644);
    port = await deadPort();
    const config = join(dir, "mosquitto.conf");
    await writeFile(
      config,
      [
        `listener ${port} 127.0.0.1`,
        "allow_anonymous false",
        `password_file ${passwords}`,
        // Advertised in CONNACK: a larger message must be refused before it is sent.
        "max_packet_size 2048",
        "persistence false",
        "",
      ].join("\n"),
    );
    const binary = existsSync("/usr/sbin/mosquitto") ? "/usr/sbin/mosquitto" : "mosquitto";
    server = spawn(binary, ["-c", config], { stdio: "ignore" });
    await untilListening(port);
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill();
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("connects with the URL's credentials", async () => {
    const transport = createMqttTransport();
    const to = target(port);
    const consumer = await subscriber(to.topic, port, credentials);
    try {
      const message = signed({ ok: true });
      await transport.send(to, message, context({ credentials }));
      const packet = await consumer.next();
      expect((packet.payload as Buffer).toString()).toBe('{"ok":true}');
    } finally {
      await consumer.close();
      await transport.close();
    }
  });

  it("fails as auth_error with a wrong password or none, never repeating the password", async () => {
    const transport = createMqttTransport();
    try {
      const wrong = { username: credentials.username, password: "wrong-password-123" };
      const err = await failure(transport.send(target(port), signed({}), context({ credentials: wrong })));
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).kind).toBe("auth_error");
      expect(err.message).not.toContain(wrong.password);
      expect(transport.connections).toBe(0);

      const none = await failure(transport.send(target(port), signed({}), context()));
      expect((none as TransportError).kind).toBe("auth_error");
    } finally {
      await transport.close();
    }
  });

  it("rejects a message larger than the server's Maximum Packet Size, keeping the connection", async () => {
    const transport = createMqttTransport();
    try {
      const big = signed({ data: "x".repeat(4000) });
      const err = await failure(transport.send(target(port), big, context({ credentials })));
      expect((err as TransportError).kind).toBe("rejected");
      expect(err.message).toContain("2048");

      await transport.send(target(port), signed({}), context({ credentials }));
      expect(transport.connections).toBe(1);
    } finally {
      await transport.close();
    }
  });
});
