import { randomBytes } from "node:crypto";
import type { AmqpTarget } from "@herald/contracts/destinations";
import amqp, { type Channel, type ChannelModel, type GetMessage } from "amqplib";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadPort } from "../../../../test/support/ports.ts";
import { createAmqpTransport } from "./amqp.ts";
import { fakeBroker, frames } from "./amqpFakeBroker.ts";
import { closed, contexts, failure, hangingServer, kindOf, relay, signer, unique } from "./testSupport.ts";
import { TransportError } from "./types.ts";

const RABBIT = "amqp://guest:guest@127.0.0.1:5672";
const { secret: SECRET, signed } = signer();
const context = contexts({ credentials: { username: "guest", password: "guest" } });

function target(fields: Partial<AmqpTarget>): AmqpTarget {
  return {
    type: "amqp",
    tls: false,
    host: "rabbit.invalid",
    port: 5672,
    vhost: "/",
    exchange: "",
    routingKey: "",
    ...fields,
  };
}

describe("the RabbitMQ transport", () => {
  let admin: ChannelModel;
  let channel: Channel;

  beforeAll(async () => {
    admin = await amqp.connect(RABBIT);
    channel = await admin.createChannel();
  });
  afterAll(async () => {
    await admin.close();
  });

  /** The next message in the queue; there must be one. */
  async function take(queue: string): Promise<GetMessage> {
    const got = await channel.get(queue, { noAck: true });
    if (!got) throw new Error(`nothing in ${queue}`);
    return got;
  }

  /** The bodies of every message in the queue, parsed, in order; the queue is left empty. */
  async function drain(queue: string): Promise<unknown[]> {
    const bodies: unknown[] = [];
    for (
      let got = await channel.get(queue, { noAck: true });
      got;
      got = await channel.get(queue, { noAck: true })
    )
      bodies.push(JSON.parse(got.content.toString("utf8")));
    return bodies;
  }

  /** A direct exchange and a queue bound to it by `key`, deleted after `use`. */
  async function withQueue<T>(
    use: (names: { exchange: string; queue: string; key: string }) => Promise<T>,
    queueArgs: Record<string, unknown> = {},
  ): Promise<T> {
    const exchange = unique();
    const queue = unique();
    const key = `${queue}.key`;
    await channel.assertExchange(exchange, "direct", { durable: false, autoDelete: false });
    await channel.assertQueue(queue, { durable: false, arguments: queueArgs });
    await channel.bindQueue(queue, exchange, key);
    try {
      return await use({ exchange, queue, key });
    } finally {
      await channel.deleteQueue(queue);
      await channel.deleteExchange(exchange);
    }
  }

  it("publishes the body byte for byte with headers a Standard Webhooks verifier accepts", async () => {
    const transport = createAmqpTransport();
    try {
      await withQueue(async ({ exchange, queue, key }) => {
        const message = signed(
          { type: "invoice.paid", data: { note: "café ✓ 日本" } },
          { "x-tenant": "acme" },
        );
        const ctx = context();
        const receipt = await transport.send(target({ exchange, routingKey: key }), message, ctx);
        expect(receipt.detail).toBe(`exchange ${exchange}, routing key ${key}`);
        // It connected to the address the guard returned, for the URL's host.
        expect(ctx.resolved).toEqual(["rabbit.invalid"]);

        const got = await take(queue);
        expect(got.content.equals(Buffer.from(message.body, "utf8"))).toBe(true);
        expect(got.properties.messageId).toBe(message.eventId);
        expect(got.properties.contentType).toBe("application/json");
        expect(got.properties.deliveryMode).toBe(2);
        const headers = got.properties.headers as Record<string, string>;
        expect(headers).toEqual(message.headers);
        const verified = new Webhook(SECRET).verify(got.content.toString("utf8"), headers);
        expect(verified).toEqual(JSON.parse(message.body));
        // A tampered body does not verify: the check above is a real one.
        expect(() =>
          new Webhook(SECRET).verify(got.content.toString("utf8").replace("café", "cafe"), headers),
        ).toThrow();
      });
    } finally {
      await transport.close();
    }
  });

  it("publishes through the default exchange to the queue named by the routing key", async () => {
    const transport = createAmqpTransport();
    try {
      await withQueue(async ({ queue }) => {
        const message = signed({ n: 1 });
        const receipt = await transport.send(target({ routingKey: queue }), message, context());
        expect(receipt.detail).toBe(`default exchange, routing key ${queue}`);
        expect((await take(queue)).properties.messageId).toBe(message.eventId);
      });
    } finally {
      await transport.close();
    }
  });

  it("rejects an unroutable message, a nack and a missing exchange, and keeps publishing after them", async () => {
    const transport = createAmqpTransport();
    try {
      // One message fits; the next is refused with a nack (overflow: reject-publish).
      await withQueue(
        async ({ exchange, queue, key }) => {
          const unroutable = await failure(
            transport.send(target({ exchange, routingKey: "nobody.listens" }), signed({ n: 1 }), context()),
          );
          expect(unroutable).toBeInstanceOf(TransportError);
          expect(unroutable).toMatchObject({
            kind: "rejected",
            message: expect.stringContaining("NO_ROUTE"),
          });

          const missing = unique();
          const notFound = await failure(
            transport.send(target({ exchange: missing, routingKey: key }), signed({ n: 2 }), context()),
          );
          expect(notFound).toMatchObject({ kind: "rejected", message: expect.stringContaining(missing) });
          expect(notFound).toBeInstanceOf(TransportError);

          await transport.send(target({ exchange, routingKey: key }), signed({ n: 3 }), context());
          const nacked = await failure(
            transport.send(target({ exchange, routingKey: key }), signed({ n: 4 }), context()),
          );
          expect(nacked).toBeInstanceOf(TransportError);
          expect(nacked).toMatchObject({ kind: "rejected", message: expect.stringContaining("nack") });

          // The one that was accepted is the only one there, and the connection served them all.
          expect(await drain(queue)).toEqual([{ n: 3 }]);
          expect(transport.connections).toBe(1);
        },
        { "x-max-length": 1, "x-overflow": "reject-publish" },
      );
    } finally {
      await transport.close();
    }
  });

  it("reports a refused connection as a connection error", async () => {
    const port = await deadPort();
    const transport = createAmqpTransport();
    try {
      const err = await failure(transport.send(target({ port, routingKey: "q" }), signed({}), context()));
      expect(kindOf(err)).toBe("connection_error");
      expect((err as { code?: string }).code).toBe("ECONNREFUSED");
      expect(transport.connections).toBe(0);
    } finally {
      await transport.close();
    }
  });

  it("times out on a server that accepts and never answers, without holding up other destinations, and reconnects after", async () => {
    const hanging = await hangingServer();
    const port = hanging.port;
    const transport = createAmqpTransport();
    try {
      await withQueue(async ({ queue }) => {
        const stuck = context();
        let settled = false;
        const first = transport.send(target({ port, routingKey: "q" }), signed({}), stuck).finally(() => {
          settled = true;
        });
        first.catch(() => {});
        await hanging.connections(1);
        // Another destination is served while the first still waits.
        await transport.send(target({ routingKey: queue }), signed({ n: 1 }), context());
        expect(settled).toBe(false);

        stuck.controller.abort();
        const err = await failure(first);
        expect(err).toBeInstanceOf(TransportError);
        expect(err).toMatchObject({ kind: "timeout" });
        // The half-open connection was given up: its socket closed, and the pool forgot it.
        await closed(hanging.sockets[0]!);
        expect(transport.connections).toBe(1);

        // The next attempt connects anew, and its own deadline (a real timer) ends it.
        const again = await failure(
          transport.send(
            target({ port, routingKey: "q" }),
            signed({}),
            context({ signal: AbortSignal.timeout(300), timeoutMs: 300 }),
          ),
        );
        expect(again).toMatchObject({ kind: "timeout" });
        expect(hanging.sockets).toHaveLength(2);
      });
    } finally {
      await transport.close();
      await hanging.close();
    }
  });

  it("gives up a connection that stops acknowledging, and the next send opens a new one", async () => {
    const broker = await relay(5672);
    const transport = createAmqpTransport();
    try {
      await withQueue(async ({ queue }) => {
        const to = target({ port: broker.port, routingKey: queue });
        await transport.send(to, signed({ n: 1 }), context());
        expect(broker.sockets).toHaveLength(1);

        broker.silence();
        const stuck = context();
        const pending = transport.send(to, signed({ n: 2 }), stuck);
        pending.catch(() => {});
        // The publish went out on the pooled connection and no confirm will come.
        await broker.swallowed;
        stuck.controller.abort();
        expect(await failure(pending)).toMatchObject({ kind: "timeout" });
        await closed(broker.sockets[0]!);
        expect(transport.connections).toBe(0);

        await transport.send(to, signed({ n: 3 }), context());
        expect(broker.sockets).toHaveLength(2);
        expect(await drain(queue)).toEqual([{ n: 1 }, { n: 3 }]);
      });
    } finally {
      await transport.close();
      await broker.close();
    }
  });

  it("logs in with the URL's credentials; a wrong password or a vhost it may not use is an auth error", async () => {
    const transport = createAmqpTransport();
    try {
      await withQueue(async ({ queue }) => {
        const to = target({ routingKey: queue });
        await transport.send(
          to,
          signed({ n: 1 }),
          context({ credentials: { username: "guest", password: "guest" } }),
        );

        const password = `wrong-${randomBytes(6).toString("hex")}`;
        const refused = await failure(
          transport.send(to, signed({ n: 2 }), context({ credentials: { username: "guest", password } })),
        );
        expect(refused).toBeInstanceOf(TransportError);
        expect(refused).toMatchObject({ kind: "auth_error" });
        expect((refused as Error).message).not.toContain(password);

        const vhost = unique();
        const noVhost = await failure(
          transport.send(target({ vhost, routingKey: queue }), signed({ n: 3 }), context()),
        );
        expect(noVhost).toMatchObject({ kind: "auth_error", message: expect.stringContaining(vhost) });
        expect((noVhost as Error).message).not.toContain("guest");

        // Only the first message arrived.
        expect(await drain(queue)).toEqual([{ n: 1 }]);
      });
    } finally {
      await transport.close();
    }
  });

  it("shares one connection per destination and closes it on close()", async () => {
    const broker = await relay(5672);
    const transport = createAmqpTransport();
    try {
      await withQueue(async ({ queue }) => {
        const to = target({ port: broker.port, routingKey: queue });
        // Two at once share the opening; a third later reuses the connection.
        await Promise.all([
          transport.send(to, signed({ n: 1 }), context()),
          transport.send(to, signed({ n: 2 }), context()),
        ]);
        await transport.send(to, signed({ n: 3 }), context());
        expect(broker.sockets).toHaveLength(1);
        expect(transport.connections).toBe(1);

        // Other credentials are another connection.
        await transport.send(to, signed({ n: 4 }), context({ credentials: null }));
        expect(broker.sockets).toHaveLength(2);
        expect(transport.connections).toBe(2);

        await transport.close();
        expect(transport.connections).toBe(0);
        await Promise.all(broker.sockets.map((c) => closed(c)));
        const count = await channel.checkQueue(queue);
        expect(count.messageCount).toBe(4);
      });
    } finally {
      await transport.close();
      await broker.close();
    }
  });

  // Each in one write, so amqplib reads them within its handshake (or channel opening), before a
  // listener of ours could be on the connection: an 'error' nobody hears ends the process.
  it.each([
    {
      after: "a connection.close (541 INTERNAL_ERROR)",
      open: Buffer.concat([frames.openOk, frames.close(541, "INTERNAL_ERROR")]),
      kind: "connection_error",
      says: "541",
    },
    {
      after: "a connection.close (530 NOT_ALLOWED)",
      open: Buffer.concat([frames.openOk, frames.close(530, "NOT_ALLOWED - no access to this vhost")]),
      kind: "auth_error",
      says: "530",
    },
    {
      // Not an error to amqplib (no 'error' event): connect() used to return it closed.
      after: "a connection.close (320 CONNECTION_FORCED)",
      open: Buffer.concat([frames.openOk, frames.close(320, "CONNECTION_FORCED - shutdown")]),
      kind: "connection_error",
      says: "320",
    },
    {
      after: "a frame on a channel never opened",
      open: Buffer.concat([frames.openOk, frames.channelOpenOk(7)]),
      kind: "connection_error",
      says: "unknown channel",
    },
  ])(
    "fails the send, and keeps no connection, when connection.open-ok comes with $after",
    async ({ open, kind, says }) => {
      const broker = await fakeBroker({ open });
      const transport = createAmqpTransport();
      try {
        const err = await failure(
          transport.send(target({ port: broker.port, routingKey: "q" }), signed({}), context()),
        );
        expect(kindOf(err)).toBe(kind);
        expect((err as Error).message).toContain(says);
        expect(transport.connections).toBe(0);
        expect(broker.sockets).toHaveLength(1);
        await closed(broker.sockets[0]!);
      } finally {
        await transport.close();
        await broker.close();
      }
    },
  );

  it.each([
    {
      answer: "channel.open-ok and a channel.close",
      channelOpen: (ch: number) =>
        Buffer.concat([frames.channelOpenOk(ch), frames.channelClose(ch, 406, "PRECONDITION_FAILED")]),
    },
    {
      answer: "a channel.close",
      channelOpen: (ch: number) => frames.channelClose(ch, 406, "PRECONDITION_FAILED"),
    },
    {
      answer: "channel.open-ok and a connection.close (541 INTERNAL_ERROR)",
      channelOpen: (ch: number) =>
        Buffer.concat([frames.channelOpenOk(ch), frames.close(541, "INTERNAL_ERROR")]),
    },
  ])(
    "fails the send, and keeps no connection, when channel.open is answered with $answer",
    async ({ channelOpen }) => {
      const broker = await fakeBroker({ open: frames.openOk, channelOpen });
      const transport = createAmqpTransport();
      try {
        const err = await failure(
          transport.send(target({ port: broker.port, routingKey: "q" }), signed({}), context()),
        );
        expect(kindOf(err)).toBe("connection_error");
        expect(transport.connections).toBe(0);
        await closed(broker.sockets[0]!);
      } finally {
        await transport.close();
        await broker.close();
      }
    },
  );
});
