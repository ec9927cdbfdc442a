import { createRequire } from "node:module";
import type { Socket } from "node:net";
import type { MqttTarget, NatsTarget, RedisTarget, Target } from "@herald/contracts/destinations";
import amqp from "amqplib";
import { describe, expect, it } from "vitest";
import { errorKind } from "../errorKind.ts";
import { createAmqpTransport } from "./amqp.ts";
import { fakeBroker, frames, method, shortstr } from "./amqpFakeBroker.ts";
import { INBOUND_SLACK_BYTES } from "./inbound.ts";
import { createMqttTransport } from "./mqtt.ts";
import { createNatsTransport } from "./nats.ts";
import { createRedisTransport } from "./redis.ts";
import { context, failure, kindOf, signer, tcpServer, unique } from "./testSupport.ts";
import type { Transport } from "./types.ts";

/**
 * Destinations that announce a frame larger than anything a send is answered with, and then
 * stream it: the sender must close the connection once the server has sent past the bound
 * (inbound.ts), not gather the frame. Each server streams 64 MiB unless the connection closes
 * first; what it managed to write is the proof of which happened.
 */
const FLOOD_BYTES = 64 * 1024 * 1024;
const { signed } = signer();

type Flood = { written: number; cut: boolean };

/** Writes `prefix`, then `chunk` until FLOOD_BYTES are written, as fast as the peer reads them. */
async function flood(socket: Socket, prefix: Buffer | string, stats: Flood, chunk = Buffer.alloc(65_536)) {
  socket.write(prefix);
  while (stats.written < FLOOD_BYTES) {
    if (socket.destroyed || socket.writableEnded) {
      stats.cut = true;
      return;
    }
    stats.written += chunk.length;
    if (!socket.write(chunk)) {
      const drained = await new Promise<boolean>((resolve) => {
        socket.once("drain", () => resolve(true));
        socket.once("close", () => resolve(false));
      });
      if (!drained) {
        stats.cut = true;
        return;
      }
    }
  }
}

/**
 * Sends once; expects the connection ended, and the server cut off well before its 64 MiB: by
 * the count of bytes at `slack` (plus the message in flight, a few hundred bytes), or by the
 * rule `says` names.
 */
async function expectCut<T extends Target>(
  transport: Transport<T>,
  target: T,
  stats: Flood,
  rule: { slack?: number; says?: RegExp } = {},
): Promise<void> {
  try {
    const error = await failure(transport.send(target, signed({ type: "invoice.paid" }), context()));
    expect(errorKind(error)).toBe("connection_error");
    if (rule.says) expect(error.message).toMatch(rule.says);
    else {
      const slack = rule.slack ?? INBOUND_SLACK_BYTES;
      expect(error.message).toMatch(/sent more than (\d+) bytes without answering/);
      const bound = Number(/more than (\d+)/.exec(error.message)?.[1]);
      expect(bound).toBeGreaterThanOrEqual(slack);
      expect(bound).toBeLessThan(slack + 4096);
    }
    await expect.poll(() => stats.cut).toBe(true);
    expect(stats.written).toBeLessThan(FLOOD_BYTES / 2);
  } finally {
    await transport.close();
  }
}

describe("what a destination's server may send without answering", () => {
  it("Redis: a bulk reply announcing 64 MiB ends the connection at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    const server = await tcpServer((socket) => {
      socket.once("data", () => void flood(socket, `$${FLOOD_BYTES}\r\n`, stats));
    });
    const target: RedisTarget = {
      type: "redis",
      tls: false,
      host: "redis.test",
      port: server.port,
      db: 0,
      stream: "s",
      maxlen: null,
    };
    await expectCut(createRedisTransport(), target, stats).finally(() => server.close());
  });

  it("NATS: an INFO line that never ends fails the opening at 64 KiB", async () => {
    const stats: Flood = { written: 0, cut: false };
    const server = await tcpServer((socket) => void flood(socket, "INFO {", stats));
    await expectCut(createNatsTransport(), natsTarget(server.port), stats, { slack: 64 * 1024 }).finally(() =>
      server.close(),
    );
  });

  it("NATS: a MSG announcing 64 MiB after the handshake ends the connection at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    const server = await tcpServer((socket) => {
      socket.write(
        `INFO {"server_id":"x","version":"2.10.0","headers":true,"max_payload":1048576,"proto":1}\r\n`,
      );
      let seen = "";
      let ponged = false;
      socket.on("data", (data) => {
        seen += data.toString("latin1");
        // CONNECT and PING are answered; the first request (the stream lookup) gets the flood.
        if (!ponged && seen.includes("PING\r\n")) {
          ponged = true;
          socket.write("PONG\r\n");
        }
        if (/PUB \S+/.test(seen) && !stats.written) void flood(socket, `MSG x 1 ${FLOOD_BYTES}\r\n`, stats);
      });
    });
    await expectCut(createNatsTransport(), natsTarget(server.port), stats).finally(() => server.close());
  });

  it("MQTT: a packet announcing 200 MiB before CONNACK fails the opening at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    // PUBLISH, remaining length 200 MiB as MQTT's variable byte integer.
    const header = Buffer.from([0x30, ...varint(200 * 1024 * 1024)]);
    const server = await tcpServer((socket) => {
      socket.once("data", () => void flood(socket, header, stats));
    });
    const target: MqttTarget = {
      type: "mqtt",
      tls: false,
      host: "mqtt.test",
      port: server.port,
      topic: "t",
      qos: 1,
    };
    await expectCut(createMqttTransport(), target, stats).finally(() => server.close());
  });

  it("RabbitMQ: a basic.return announcing 64 MiB, more than any message in flight, ends the connection", async () => {
    const stats: Flood = { written: 0, cut: false };
    const broker = await fakeBroker({
      open: frames.openOk,
      onPublish: (socket, channel) => {
        if (!stats.written)
          void flood(socket, frames.returned(channel, FLOOD_BYTES), stats, frames.body(channel, 65_528));
      },
    });
    const target = {
      type: "amqp" as const,
      tls: false,
      host: "rabbit.test",
      port: broker.port,
      vhost: "/",
      exchange: "",
      routingKey: "q",
    };
    const says = /returned a message of 67108864 bytes, more than the \d+ in flight/;
    await expectCut(createAmqpTransport(), target, stats, { says }).finally(() => broker.close());
  });

  it("RabbitMQ: a 2 MiB message returned unroutable is rejected, not cut: the message in flight may come back", async () => {
    const transport = createAmqpTransport();
    const admin = await amqp.connect("amqp://guest:guest@127.0.0.1:5672");
    try {
      // The default exchange with a queue name nobody declared: RabbitMQ returns the message whole.
      const message = signed({ type: "invoice.paid", pad: "x".repeat(2 * 1024 * 1024) });
      const target = {
        type: "amqp" as const,
        tls: false,
        host: "rabbit.test",
        port: 5672,
        vhost: "/",
        exchange: "",
        routingKey: unique(),
      };
      const ctx = () => context({ credentials: { username: "guest", password: "guest" } });
      const error = await failure(transport.send(target, message, ctx()));
      expect(kindOf(error)).toBe("rejected");
      expect(error.message).toContain("unroutable");
      // The connection is kept, and the next message, routable now, goes through on it.
      const channel = await admin.createChannel();
      await channel.assertQueue(target.routingKey, { autoDelete: false });
      try {
        await transport.send(target, message, ctx());
        expect(transport.connections).toBe(1);
        expect((await channel.checkQueue(target.routingKey)).messageCount).toBe(1);
      } finally {
        await channel.deleteQueue(target.routingKey);
      }
    } finally {
      await admin.close();
      await transport.close();
    }
  });

  it("Redis: a reply no command gets (an array header, which ioredis would allocate) ends the connection", async () => {
    // Twenty nested 32-million-element arrays: 220 bytes that would exhaust the heap.
    const bomb = "*33554432\r\n".repeat(20);
    const server = await tcpServer((socket) => socket.once("data", () => socket.write(bomb)));
    const transport = createRedisTransport();
    try {
      const error = await failure(transport.send(redisTarget(server.port), signed({}), context()));
      expect(kindOf(error)).toBe("connection_error");
      expect(error.message).toContain(`sent a reply of type "*", which no command of Herald's gets`);
    } finally {
      await transport.close();
      await server.close();
    }
  });

  it("Redis: a server that answers without reading what it is sent is cut once our writes pile up", async () => {
    let peer: Socket | null = null;
    const server = await tcpServer((socket) => {
      peer = socket;
      // Reads the first command, then nothing more: what the sender writes stays with it.
      socket.once("data", () => socket.pause());
    });
    const transport = createRedisTransport();
    const pad = "x".repeat(512 * 1024);
    try {
      let error: Error | null = null;
      for (let i = 1; i <= 20 && !error; i++) {
        const sending = transport.send(redisTarget(server.port), signed({ i, pad }), context()).then(
          () => null,
          (err: Error) => err,
        );
        await server.connections(1);
        await expect.poll(() => peer !== null).toBe(true);
        // Answers as if it had read the XADD.
        peer!.write(`$${String(i).length + 2}\r\n${i}-0\r\n`);
        error = await sending;
      }
      expect(error?.message).toMatch(/answered while \d+ bytes of ours were still unread/);
      expect(kindOf(error)).toBe("connection_error");
    } finally {
      await transport.close();
      await server.close();
    }
  });

  it("RabbitMQ: a delivered message, or an acknowledgement of a tag no publish has, ends the connection", async () => {
    const answers = {
      deliver: (channel: number) =>
        method(
          channel,
          60,
          60,
          Buffer.concat([shortstr("ctag"), Buffer.alloc(9), shortstr(""), shortstr("q")]),
        ),
      ack: (channel: number) => {
        const args = Buffer.alloc(9);
        args.writeBigUInt64BE(2n ** 40n, 0);
        return method(channel, 60, 80, args);
      },
    };
    for (const [what, answer] of Object.entries(answers)) {
      const broker = await fakeBroker({
        open: frames.openOk,
        onPublish: (socket, channel) => socket.write(answer(channel)),
      });
      const transport = createAmqpTransport();
      try {
        const error = await failure(transport.send(amqpTarget(broker.port), signed({}), context()));
        expect(kindOf(error), what).toBe("connection_error");
        expect(error.message, what).toMatch(
          what === "deliver"
            ? /delivered a message, though Herald consumes none/
            : /acknowledged delivery tag \d+, which no publish is waiting on/,
        );
      } finally {
        await transport.close();
        await broker.close();
      }
    }
  });

  it("MQTT: a PUBLISH from the server (mqtt.js keeps each QoS 2 one) ends the connection", async () => {
    const packets = createRequire(createRequire(import.meta.url).resolve("mqtt"))(
      "mqtt-packet",
    ) as MqttPackets;
    const server = await tcpServer((socket) => {
      const parser = packets.parser({ protocolVersion: 5 });
      parser.on("packet", (p: { cmd: string; messageId?: number }) => {
        const send = (packet: object) => socket.write(packets.generate(packet, { protocolVersion: 5 }));
        if (p.cmd === "connect")
          send({ cmd: "connack", reasonCode: 0, sessionPresent: false, properties: {} });
        if (p.cmd === "publish") {
          send({
            cmd: "publish",
            topic: "x",
            qos: 2,
            messageId: 1,
            payload: Buffer.alloc(1024),
            retain: false,
            dup: false,
          });
          send({ cmd: "puback", messageId: p.messageId, reasonCode: 0 });
        }
      });
      socket.on("data", (data: Buffer) => parser.parse(data));
    });
    const transport = createMqttTransport();
    try {
      const target: MqttTarget = {
        type: "mqtt",
        tls: false,
        host: "mqtt.test",
        port: server.port,
        topic: "t",
        qos: 1,
      };
      const error = await failure(transport.send(target, signed({}), context()));
      expect(kindOf(error)).toBe("connection_error");
      expect(error.message).toContain("sent a PUBLISH, though Herald subscribes to nothing");
    } finally {
      await transport.close();
      await server.close();
    }
  });
});

type MqttPackets = {
  parser(options: object): {
    on(event: "packet", fn: (p: { cmd: string; messageId?: number }) => void): void;
    parse(data: Buffer): void;
  };
  generate(packet: object, options: object): Buffer;
};

function redisTarget(port: number): RedisTarget {
  return { type: "redis", tls: false, host: "redis.test", port, db: 0, stream: "s", maxlen: null };
}

function amqpTarget(port: number) {
  return {
    type: "amqp" as const,
    tls: false,
    host: "rabbit.test",
    port,
    vhost: "/",
    exchange: "",
    routingKey: "q",
  };
}

function natsTarget(port: number): NatsTarget {
  return { type: "nats", tls: false, host: "nats.test", port, subject: "orders" };
}

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}
