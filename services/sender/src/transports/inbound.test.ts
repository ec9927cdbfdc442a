import { once } from "node:events";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import type { MqttTarget, NatsTarget, RedisTarget, Target } from "@herald/contracts/destinations";
import { afterEach, describe, expect, it } from "vitest";
import { errorKind } from "../errorKind.ts";
import { INBOUND_SLACK_BYTES } from "./inbound.ts";
import { createMqttTransport } from "./mqtt.ts";
import { createNatsTransport } from "./nats.ts";
import { createRedisTransport } from "./redis.ts";
import type { Message, SendContext, Transport } from "./types.ts";

/**
 * Destinations that announce a frame larger than anything a send is answered with, and then
 * stream it: the sender must close the connection once the server has sent past the bound
 * (inbound.ts), not gather the frame. Each server streams 64 MiB unless the connection closes
 * first; what it managed to write is the proof of which happened.
 */
const FLOOD_BYTES = 64 * 1024 * 1024;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.close();
    await once(server, "close");
  }
});

type Flood = { written: number; cut: boolean };

/** Writes `prefix`, then zeros up to FLOOD_BYTES in all, as fast as the peer reads them. */
async function flood(socket: Socket, prefix: Buffer | string, stats: Flood): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024);
  socket.on("error", () => {});
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

/** A server on an ephemeral port; `onSocket` speaks its protocol. */
async function serve(onSocket: (socket: Socket) => void): Promise<number> {
  const server = createServer(onSocket);
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

const message: Message = {
  eventId: "evt_inbound",
  body: JSON.stringify({ type: "invoice.paid" }),
  headers: { "content-type": "application/json", "webhook-id": "evt_inbound" },
};

function context(): SendContext {
  return {
    signal: AbortSignal.timeout(20_000),
    timeoutMs: 20_000,
    credentials: null,
    resolve: async () => "127.0.0.1",
  };
}

/** Sends once and expects the bound's failure, with the server cut off well before its 64 MiB. */
async function expectCut<T extends Target>(transport: Transport<T>, target: T, stats: Flood): Promise<void> {
  const error = await transport.send(target, message, context()).then(
    () => null,
    (err: unknown) => err as Error,
  );
  expect(error?.message).toMatch(/sent more than (\d+) bytes without answering/);
  const bound = Number(/more than (\d+)/.exec(error?.message ?? "")?.[1]);
  expect(bound).toBeGreaterThanOrEqual(INBOUND_SLACK_BYTES);
  expect(bound).toBeLessThan(INBOUND_SLACK_BYTES + 4096);
  expect(errorKind(error)).toBe("connection_error");
  await expect.poll(() => stats.cut).toBe(true);
  expect(stats.written).toBeLessThan(FLOOD_BYTES / 2);
}

describe("what a destination's server may send without answering", () => {
  it("Redis: a bulk reply announcing 64 MiB ends the connection at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    const port = await serve((socket) => {
      socket.once("data", () => void flood(socket, `$${FLOOD_BYTES}\r\n`, stats));
    });
    const transport = createRedisTransport();
    const target: RedisTarget = {
      type: "redis",
      tls: false,
      host: "redis.test",
      port,
      db: 0,
      stream: "s",
      maxlen: null,
    };
    try {
      await expectCut(transport, target, stats);
    } finally {
      await transport.close();
    }
  });

  it("NATS: an INFO line that never ends fails the opening at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    const port = await serve((socket) => void flood(socket, "INFO {", stats));
    const transport = createNatsTransport();
    try {
      await expectCut(transport, natsTarget(port), stats);
    } finally {
      await transport.close();
    }
  });

  it("NATS: a MSG announcing 64 MiB after the handshake ends the connection at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    const port = await serve((socket) => {
      socket.write(
        `INFO {"server_id":"x","version":"2.10.0","headers":true,"max_payload":1048576,"proto":1}\r\n`,
      );
      let seen = "";
      socket.on("data", (data) => {
        seen += data.toString("latin1");
        // CONNECT and PING are answered; the first request (the stream lookup) gets the flood.
        if (seen.includes("PING\r\n") && !seen.includes("PONG-SENT")) {
          seen += "PONG-SENT";
          socket.write("PONG\r\n");
        }
        if (/PUB \S+/.test(seen) && !stats.written) void flood(socket, `MSG x 1 ${FLOOD_BYTES}\r\n`, stats);
      });
    });
    const transport = createNatsTransport();
    try {
      await expectCut(transport, natsTarget(port), stats);
    } finally {
      await transport.close();
    }
  });

  it("MQTT: a packet announcing 200 MiB before CONNACK fails the opening at the bound", async () => {
    const stats: Flood = { written: 0, cut: false };
    // PUBLISH, remaining length 200 MiB as MQTT's variable byte integer.
    const header = Buffer.from([0x30, ...varint(200 * 1024 * 1024)]);
    const port = await serve((socket) => {
      socket.once("data", () => void flood(socket, header, stats));
    });
    const transport = createMqttTransport();
    const target: MqttTarget = { type: "mqtt", tls: false, host: "mqtt.test", port, topic: "t", qos: 1 };
    try {
      await expectCut(transport, target, stats);
    } finally {
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
