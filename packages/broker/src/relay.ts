import { randomUUID } from "node:crypto";
import type { Channel, ConsumeMessage, Message } from "amqplib";
import type { Broker } from "./broker.ts";

/**
 * The listen relay: a request and its answer over RabbitMQ, between a sender making an attempt
 * to a `herald listen` endpoint (`herald-listen://<endpoint id>`) and the gateway replica holding
 * that CLI's socket. The sender publishes the signed request to `<p>.listen` with the endpoint's
 * id as routing key, `mandatory` (no socket connected: returned at once, a connection error) and
 * expiring with the attempt's timeout; the replica's inbox, an exclusive queue bound to that key,
 * hands it to the socket, and replies to the sender's own reply queue with what the CLI's local
 * server answered. Nothing here calls a URL: the CLI does, on the developer's machine.
 */
export type RelayRequest = { headers: Record<string, string>; body: string };
export type RelayResponse = { status: number; headers: Record<string, string>; body: string };

/**
 * Not answered within the attempt's timeout, or refused at once by the gateway because the
 * socket (or the gateway) holds as many unanswered requests as it may; `code` read as `timeout`
 * by the sender.
 */
export class RelayTimeoutError extends Error {
  readonly code = "ETIMEDOUT";
}
/** No CLI is connected for the endpoint, or the broker is away; read as `connection_error`. */
export class RelayUnreachableError extends Error {
  readonly code = "ECONNREFUSED";
}

/**
 * The AMQP `type` of the gateway's reply to a request it did not take: no body, the attempt
 * fails at once as a timeout (the client left earlier requests unanswered, or the gateway holds
 * all it may).
 */
const REFUSED = "herald.listen.refused";

type Pending = { resolve: (r: RelayResponse) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/** The sender's side: one channel and one reply queue a process, made on first use and after a reconnection. */
export class RelayClient {
  private channel: Promise<{ channel: Channel; replyQueue: string }> | null = null;
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly broker: Broker) {}

  async call(endpointId: string, request: RelayRequest, timeoutMs: number): Promise<RelayResponse> {
    let open: { channel: Channel; replyQueue: string };
    try {
      open = await this.open();
    } catch (err) {
      throw new RelayUnreachableError(`listen relay unavailable: ${(err as Error).message}`);
    }
    const id = randomUUID();
    return new Promise<RelayResponse>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(id, new RelayTimeoutError("no answer in time")), timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      try {
        open.channel.publish(
          this.broker.topology.listenExchange,
          endpointId,
          Buffer.from(JSON.stringify(request)),
          {
            mandatory: true,
            correlationId: id,
            replyTo: open.replyQueue,
            expiration: String(Math.max(1, timeoutMs)),
            contentType: "application/json",
          },
        );
      } catch (err) {
        this.settle(id, new RelayUnreachableError(`listen relay unavailable: ${(err as Error).message}`));
      }
    });
  }

  private settle(id: string, outcome: RelayResponse | Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
  }

  private open(): Promise<{ channel: Channel; replyQueue: string }> {
    this.channel ??= (async () => {
      const channel = await this.broker.openChannel();
      await channel.assertExchange(this.broker.topology.listenExchange, "direct", { durable: true });
      const { queue } = await channel.assertQueue("", { exclusive: true, autoDelete: true });
      await channel.consume(queue, (msg) => msg && this.answered(msg), { noAck: true });
      channel.on("return", (msg: ConsumeMessage) =>
        this.settle(
          String(msg.properties.correlationId),
          new RelayUnreachableError("no `herald listen` is connected for this endpoint"),
        ),
      );
      channel.on("close", () => {
        this.channel = null;
        for (const id of [...this.pending.keys()])
          this.settle(id, new RelayUnreachableError("broker connection lost"));
      });
      return { channel, replyQueue: queue };
    })().catch((err) => {
      this.channel = null;
      throw err;
    });
    return this.channel;
  }

  private answered(msg: ConsumeMessage): void {
    if (msg.properties.type === REFUSED) {
      this.settle(
        String(msg.properties.correlationId),
        new RelayTimeoutError("the `herald listen` socket holds as many unanswered requests as it may"),
      );
      return;
    }
    try {
      const r = JSON.parse(msg.content.toString("utf8")) as RelayResponse;
      this.settle(String(msg.properties.correlationId), {
        status: Number(r.status),
        headers: r.headers ?? {},
        body: String(r.body ?? ""),
      });
    } catch {
      this.settle(String(msg.properties.correlationId), new RelayUnreachableError("unreadable answer"));
    }
  }

  async close(): Promise<void> {
    const open = this.channel;
    this.channel = null;
    if (open) await (await open.catch(() => null))?.channel.close().catch(() => {});
  }
}

/**
 * One request as the gateway hands it to a socket: answer it, let it expire after
 * `expiresInMs` (its sender has stopped waiting by then), or refuse it at once. Any of them
 * frees its place in the inbox. Once handed over, the inbox keeps nothing of its content.
 */
export type RelayedRequest = RelayRequest & {
  /** Its size as relayed (the message), bytes. */
  bytes: number;
  expiresInMs: number;
  answer(response: RelayResponse): void;
  expire(): void;
  /** Not taken: the sender fails the attempt at once, as a timeout. */
  refuse(): void;
};

/**
 * How one request is settled (a reply or none, then its ack), once. It holds the reply's
 * address and the delivery tag only, not the message: a request waiting for its answer keeps
 * none of its content here.
 */
function settler(channel: Channel, msg: ConsumeMessage, closing: () => boolean) {
  const replyTo = String(msg.properties.replyTo);
  const correlationId = msg.properties.correlationId;
  // What ack reads of a message: its delivery tag.
  const delivered = { fields: msg.fields } as Message;
  let settled = false;
  return (reply: RelayResponse | typeof REFUSED | null) => {
    if (settled || closing()) return;
    settled = true;
    try {
      if (reply === REFUSED) channel.sendToQueue(replyTo, Buffer.alloc(0), { correlationId, type: REFUSED });
      else if (reply)
        channel.sendToQueue(replyTo, Buffer.from(JSON.stringify(reply)), {
          correlationId,
          contentType: "application/json",
        });
      channel.ack(delivered);
    } catch {
      // The channel closed meanwhile (onClosed follows): the sender sees a timeout or an error.
    }
  };
}

/**
 * The gateway's side: an exclusive queue bound to one endpoint's id, for as long as its CLI's
 * socket is open. At most `maxWaiting` requests wait in it (more are refused, and the senders
 * see a connection error); `onClosed` is called when the broker connection goes, so the socket
 * is closed too and the CLI reconnects.
 */
export async function openRelayInbox(
  broker: Broker,
  endpointId: string,
  onRequest: (request: RelayedRequest) => void,
  onClosed: () => void,
  maxWaiting = 100,
): Promise<{ close(): Promise<void> }> {
  const channel = await broker.openChannel();
  let closing = false;
  channel.on("close", () => {
    if (closing) return;
    closing = true;
    onClosed();
  });
  await channel.assertExchange(broker.topology.listenExchange, "direct", { durable: true });
  const { queue } = await channel.assertQueue("", {
    exclusive: true,
    autoDelete: true,
    arguments: { "x-max-length": maxWaiting, "x-overflow": "reject-publish" },
  });
  await channel.bindQueue(queue, broker.topology.listenExchange, endpointId);
  // At most `maxWaiting` handed over and not yet answered or expired; the rest wait in the
  // queue, itself bounded, so a client that answers nothing holds a bounded amount here.
  await channel.prefetch(maxWaiting);
  await channel.consume(queue, (msg) => {
    if (!msg) return;
    const settle = settler(channel, msg, () => closing);
    let request: RelayRequest;
    try {
      request = JSON.parse(msg.content.toString("utf8")) as RelayRequest;
    } catch {
      return settle(null);
    }
    onRequest({
      headers: request.headers ?? {},
      body: String(request.body ?? ""),
      bytes: msg.content.length,
      expiresInMs: Math.max(1, Number(msg.properties.expiration) || 30_000),
      answer: (response) => settle(response),
      expire: () => settle(null),
      refuse: () => settle(REFUSED),
    });
  });
  return {
    async close() {
      closing = true;
      await channel.close().catch(() => {});
    },
  };
}
