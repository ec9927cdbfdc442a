import type { Socket } from "node:net";
import type { MqttTarget, NatsTarget, RedisTarget, Target } from "@herald/contracts/destinations";
import amqp from "amqplib";
import { describe, expect, it } from "vitest";
import { errorKind } from "../errorKind.ts";
import { createAmqpTransport } from "./amqp.ts";
import { fakeBroker, frames } from "./amqpFakeBroker.ts";
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

/** Sends once; expects the bound's failure, and the server cut off well before its 64 MiB. */
async function expectCut<T extends Target>(transport: Transport<T>, target: T, stats: Flood): Promise<void> {
  try {
    const error = await failure(transport.send(target, signed({ type: "invoice.paid" }), context()));
    expect(error.message).toMatch(/sent more than (\d+) bytes without answering/);
    const bound = Number(/more than (\d+)/.exec(error.message)?.[1]);
    expect(bound).toBeGreaterThanOrEqual(INBOUND_SLACK_BYTES);
    expect(bound).toBeLessThan(INBOUND_SLACK_BYTES + 4096);
    expect(errorKind(error)).toBe("connection_error");
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

  it("NATS: an INFO line that never ends fails the opening at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    const server = await tcpServer((socket) => void flood(socket, "INFO {", stats));
    await expectCut(createNatsTransport(), natsTarget(server.port), stats).finally(() => server.close());
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

  it("RabbitMQ: a basic.return announcing 64 MiB ends the connection at the bound", async () => {
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
    await expectCut(createAmqpTransport(), target, stats).finally(() => broker.close());
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
});

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
