import type { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import type { AmqpTarget } from "@herald/contracts/destinations";
import amqp, {
  type Message as AmqpMessage,
  type ChannelModel,
  type ConfirmChannel,
  type SocketOptions,
} from "amqplib";
import { guardFrames } from "./amqpFrames.ts";
import { InboundLimit, messageBytes } from "./inbound.ts";
import { ConnectionPool, connectionKey, untilAborted } from "./pool.ts";
import {
  type Message,
  type Receipt,
  type SendContext,
  scrub,
  type Transport,
  TransportError,
} from "./types.ts";

/**
 * RabbitMQ (AMQP 0-9-1): each delivery is published, mandatory and persistent, on a confirm
 * channel; the attempt succeeds on the broker's ack. An unroutable message (basic.return), a
 * nack or a missing exchange is `rejected`; refused credentials (or vhost) are `auth_error`.
 *
 * One connection per destination (host, port, vhost, credentials) in the pool; on it, confirm
 * channels each carrying one publish at a time, so a basic.return or a channel error belongs to
 * the publish in flight on that channel. amqplib does not reconnect by itself (its `recovery`
 * option is left off): a broken connection is dropped and the next send opens a new one.
 */

type Opening = EventEmitter & {
  open(fields: unknown, done?: (err: Error | null, ok?: unknown) => void): void;
};

// amqplib 2.3 handles the frames that come with connection.open-ok (a connection.close, a frame
// on a channel never opened) inside its handshake, before connect() has handed over the
// connection to listen on: the 'error' they emit has no listener and ends the process, and the
// connection connect() then returns is closed already. So every connection gets an 'error'
// listener before its handshake starts, and one that ended during it fails to open, with what
// ended it (a connection.close's reply code is the error's `code`). The listener stays: after a
// failed open nothing else listens. It is every amqplib connection in the process (the broker's
// too): theirs fail to open where they used to end it. lib/connection.js is not among the
// package's exports, so it is required relative to the package's entry point.
const { Connection: AmqplibConnection } = createRequire(createRequire(import.meta.url).resolve("amqplib"))(
  "./lib/connection.js",
) as { Connection: { prototype: Opening } };
const openConnection = AmqplibConnection.prototype.open;
AmqplibConnection.prototype.open = function (this: Opening, fields, done) {
  let ended: Error | null = null;
  const onEnd = (err?: Error) => {
    ended ??= err ?? new Error("Connection closed during the opening handshake");
  };
  this.on("error", onEnd);
  this.on("close", onEnd);
  openConnection.call(this, fields, (err, ok) => {
    this.off("close", onEnd);
    if (err === null && ended) done?.(ended);
    else done?.(err, ok);
  });
};

type Connection = {
  model: ChannelModel;
  /** Where, for messages: `host:port`, never with credentials. */
  where: string;
  idle: ConfirmChannel[];
  /** Closed, or given up on (an acknowledgement that never came): never reused, not closed politely. */
  broken: boolean;
  /** What the broker sent since it last answered (inbound.ts). */
  inbound: InboundLimit;
};

/**
 * Idle channels kept per connection: 32, so bursts to one destination reuse them; a publish
 * beyond that opens its own (two round trips: channel.open, confirm.select) and closes it after,
 * leaving the customer's broker few idle channels of ours.
 */
const IDLE_CHANNELS = 32;
/** A polite close (connection.close, waiting for close-ok) gets 1 s; then the socket is destroyed. */
const CLOSE_GRACE_MS = 1000;
/**
 * The largest frame taken from the broker: the frame size we offer (amqplib's 128 KiB), so that
 * no frame of the handshake, before inbound.ts counts, can be larger. amqplib's default is 64 MiB.
 */
const MAX_FRAME_BYTES = 131_072;

/** AMQP reply codes the broker closes a connection or channel with. */
const ACCESS_REFUSED = 403;
const NOT_ALLOWED = 530;

function detailOf(target: AmqpTarget): string {
  return target.exchange
    ? `exchange ${target.exchange}, routing key ${target.routingKey}`
    : `default exchange, routing key ${target.routingKey}`;
}

/**
 * The reply code of a handshake the broker ended: after start-ok it says why ("Handshake
 * terminated by server: 403 (…)"); after connection.open amqplib keeps only that it closed,
 * which RabbitMQ does when the user may not use the vhost (530 NOT_ALLOWED); a connection.close
 * that came with open-ok has it as the error's `code` (a socket error's is a string).
 */
function handshakeCode(err: unknown): number | null {
  const message = (err as Error)?.message ?? "";
  const match = /^Handshake terminated by server: (\d+)/.exec(message);
  if (match) return Number(match[1]);
  if (message.startsWith("Expected ConnectionOpenOk; got <ConnectionClose")) return NOT_ALLOWED;
  const code = (err as { code?: unknown })?.code;
  return typeof code === "number" ? code : null;
}

function socket(model: ChannelModel): Duplex | undefined {
  // amqplib's Connection keeps its socket as `stream`; the typings leave it out.
  return (model.connection as unknown as { stream?: Duplex }).stream;
}

async function closeConnection(connection: Connection): Promise<void> {
  const wasBroken = connection.broken;
  connection.broken = true;
  const stream = socket(connection.model);
  if (wasBroken) {
    stream?.destroy();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    connection.model.close().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        stream?.destroy();
        resolve();
      }, CLOSE_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * Opens the destination's connection at the address the guard resolved. Bounded by the signal
 * of the send that opens it: when that ends, the socket is destroyed and the opening fails, so
 * the pool forgets it and the next send starts afresh.
 */
async function open(
  target: AmqpTarget,
  context: SendContext,
  onBroken: (connection: Connection) => void,
): Promise<Connection> {
  const where = `${target.host}:${target.port}`;
  const abandon = new AbortController();
  const onAbort = () => abandon.abort();
  context.signal.addEventListener("abort", onAbort, { once: true });
  if (context.signal.aborted) abandon.abort();
  try {
    const address = await untilAborted(context.resolve(target.host), abandon.signal, where);
    const credentials = context.credentials;
    // The socket is destroyed when `abandon` aborts (net.connect's `signal`; amqplib passes it on).
    const socketOptions: SocketOptions & { signal: AbortSignal } = {
      // The certificate is checked against the name in the URL, not the address connected to.
      ...(target.tls && !isIP(target.host) ? { servername: target.host } : {}),
      signal: abandon.signal,
      clientProperties: { connection_name: "herald-sender" },
    };
    let model: ChannelModel;
    try {
      model = await amqp.connect(
        {
          protocol: target.tls ? "amqps" : "amqp",
          hostname: address,
          port: target.port,
          // amqplib percent-decodes the vhost once more; the target's is decoded already.
          vhost: encodeURIComponent(target.vhost),
          frameMax: MAX_FRAME_BYTES,
          maxFrameSize: MAX_FRAME_BYTES,
          // Without user info, amqplib logs in as guest/guest (the AMQP URI default).
          ...(credentials ? { username: credentials.username, password: credentials.password } : {}),
        },
        socketOptions,
      );
    } catch (err) {
      if (abandon.signal.aborted)
        throw new TransportError("timeout", `no answer from ${where} while connecting`);
      const code = handshakeCode(err);
      if (code === ACCESS_REFUSED)
        throw new TransportError("auth_error", `RabbitMQ at ${where} refused the login (403 ACCESS_REFUSED)`);
      if (code === NOT_ALLOWED)
        throw new TransportError(
          "auth_error",
          `RabbitMQ at ${where} refused access to vhost ${target.vhost} (530 NOT_ALLOWED): it does not exist or the user may not use it`,
        );
      if (code !== null)
        throw new TransportError(
          "connection_error",
          `RabbitMQ at ${where} ended the handshake: ${scrub((err as Error).message, credentials)}`,
        );
      // A socket error (ECONNREFUSED, ECONNRESET, a TLS failure), or a frame amqplib refused
      // (on a channel never opened): errorKind.ts reads its code (none: connection_error).
      throw err;
    }
    let contentPending = () => false;
    const inbound = new InboundLimit(`RabbitMQ at ${where}`, {
      echoes: true,
      canReset: () => !contentPending(),
    });
    const stream = socket(model);
    if (stream) inbound.watch(stream);
    contentPending = guardFrames(model, inbound);
    const connection: Connection = { model, where, idle: [], broken: false, inbound };
    // A connection that fails or closes is dropped; its 'error' never goes unheard.
    model.on("error", () => onBroken(connection));
    model.on("close", () => onBroken(connection));
    return connection;
  } finally {
    context.signal.removeEventListener("abort", onAbort);
  }
}

async function channelOf(connection: Connection): Promise<ConfirmChannel> {
  const idle = connection.idle.pop();
  if (idle) return idle;
  // A channel the broker closes while it opens emits 'error' before the listener below: amqplib
  // turns that into an error of the connection, which open()'s listener hears.
  const channel = await connection.model.createConfirmChannel();
  // A channel the broker closes (a missing exchange: 404) is never reused; the publish in flight
  // reads the error from its own listener.
  channel.on("error", () => {});
  channel.on("close", () => {
    const at = connection.idle.indexOf(channel);
    if (at >= 0) connection.idle.splice(at, 1);
  });
  return channel;
}

function release(connection: Connection, channel: ConfirmChannel): void {
  if (connection.broken) return;
  if (connection.idle.length < IDLE_CHANNELS) connection.idle.push(channel);
  else void channel.close().catch(() => {});
}

/** What the broker did with one publish; `closed`: the channel went away (its error, if any). */
type Outcome =
  | { kind: "ack" }
  | { kind: "returned"; replyCode: number; replyText: string }
  | { kind: "nack" }
  | { kind: "closed"; error: (Error & { code?: number }) | null };

function publishOn(channel: ConfirmChannel, target: AmqpTarget, message: Message): Promise<Outcome> {
  return new Promise((resolve) => {
    let returned: AmqpMessage | null = null;
    let channelError: (Error & { code?: number }) | null = null;
    // RabbitMQ sends basic.return before the ack of an unroutable mandatory message.
    const onReturn = (m: AmqpMessage) => {
      returned = m;
    };
    const onError = (err: Error) => {
      channelError = err;
    };
    channel.on("return", onReturn);
    channel.on("error", onError);
    const settle = (outcome: Outcome) => {
      channel.off("return", onReturn);
      channel.off("error", onError);
      resolve(outcome);
    };
    const headers = message.headers;
    const timestamp = Number(headers["webhook-timestamp"]);
    try {
      channel.publish(
        target.exchange,
        target.routingKey,
        Buffer.from(message.body, "utf8"),
        {
          mandatory: true,
          persistent: true,
          messageId: message.eventId,
          contentType: headers["content-type"] ?? "application/json",
          ...(Number.isInteger(timestamp) ? { timestamp } : {}),
          appId: "herald",
          headers,
        },
        (err: unknown) => {
          // A returned message's fields carry basic.return's reply (312 NO_ROUTE); the typings omit them.
          const r = (returned as AmqpMessage | null)?.fields as
            | { replyCode: number; replyText: string }
            | undefined;
          if (r) settle({ kind: "returned", replyCode: r.replyCode, replyText: r.replyText });
          else if (!err) settle({ kind: "ack" });
          else if (channelError || (err as Error).message !== "message nacked")
            settle({ kind: "closed", error: channelError });
          else settle({ kind: "nack" });
        },
      );
    } catch {
      // The channel or its connection closed before the publish could be written.
      settle({ kind: "closed", error: null });
    }
  });
}

export function createAmqpTransport(
  options: { maxConnections?: number } = {},
): Transport<AmqpTarget> & { readonly connections: number } {
  const pool = new ConnectionPool<Connection>(options.maxConnections ?? 64, closeConnection);

  /** The destination's connection; an opening abandoned by another send's deadline is retried. */
  function connectionFor(key: string, target: AmqpTarget, context: SendContext): Promise<Connection> {
    const onBroken = (connection: Connection) => {
      connection.broken = true;
      pool.drop(key, connection);
    };
    const where = `${target.host}:${target.port}`;
    return pool.acquire(key, () => open(target, context, onBroken), context.signal, where);
  }

  return {
    type: "amqp",
    get connections() {
      return pool.size;
    },
    async send(target: AmqpTarget, message: Message, context: SendContext): Promise<Receipt> {
      const credentials = context.credentials;
      const key = connectionKey(["amqp", target.tls, target.host, target.port, target.vhost], credentials);
      const detail = detailOf(target);
      const connection = await connectionFor(key, target, context);
      const where = connection.where;
      let outcome: Outcome;
      const settle = connection.inbound.sending(messageBytes(message));
      try {
        const channel = await untilAborted(channelOf(connection), context.signal, where);
        outcome = await untilAborted(publishOn(channel, target, message), context.signal, where);
        settle(outcome.kind !== "closed" || outcome.error !== null);
        if (outcome.kind === "ack" || outcome.kind === "returned" || outcome.kind === "nack")
          release(connection, channel);
      } catch (err) {
        settle(false);
        if (connection.inbound.violation) throw connection.inbound.violation;
        if (err instanceof TransportError && err.kind === "timeout") {
          // Open but silent (a half-open socket, a broker that stopped answering): never reused.
          connection.broken = true;
          pool.drop(key, connection);
          throw err;
        }
        // Opening a channel failed: the connection is closing under us.
        throw new TransportError(
          "connection_error",
          `connection to ${where} failed: ${scrub((err as Error).message, credentials)}`,
        );
      }
      switch (outcome.kind) {
        case "ack":
          return { detail };
        case "returned":
          throw new TransportError(
            "rejected",
            `RabbitMQ returned the message as unroutable (${outcome.replyCode} ${outcome.replyText}): no queue is bound to ${detail}`,
          );
        case "nack":
          throw new TransportError(
            "rejected",
            `RabbitMQ refused the message (nack) at ${detail}, e.g. a queue at its length limit`,
          );
        case "closed": {
          const error = outcome.error;
          if (connection.inbound.violation) throw connection.inbound.violation;
          if (!error)
            throw new TransportError(
              "connection_error",
              `connection to ${where} closed before RabbitMQ confirmed the message`,
            );
          // The broker closed the channel over this publish: 404 (no such exchange), 406 (too
          // large), or 403 (these credentials may not write to the exchange).
          const said = scrub(error.message, credentials);
          throw new TransportError(error.code === ACCESS_REFUSED ? "auth_error" : "rejected", said);
        }
      }
    },
    close: () => pool.close(),
  };
}
