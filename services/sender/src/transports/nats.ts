import { isIP, isIPv6 } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { ConnectionOptions as ConnectionOptionsTls } from "node:tls";
import type { NatsTarget } from "@herald/contracts/destinations";
import {
  type ConnectionOptions,
  connect,
  Events,
  type JetStreamClient,
  type JetStreamManager,
  type MsgHdrs,
  type NatsConnection,
  headers as natsHeaders,
  type TlsOptions,
} from "nats";
import type { InboundLimit } from "./inbound.ts";
import { messageBytes } from "./inbound.ts";
import { inboundOf } from "./natsClient.ts";
import { ConnectionPool, connectionKey, untilAborted } from "./pool.ts";
import { type Message, type Receipt, type SendContext, type Transport, TransportError } from "./types.ts";

/**
 * NATS (`nats://`, `tls://`): each delivery is published to the target's subject with the
 * Standard Webhooks headers as NATS headers. When a JetStream stream takes the subject the
 * publish is a JetStream one, acknowledged by the stream and deduplicated by `Nats-Msg-Id` (the
 * event id); otherwise it is core NATS, and the server answering the flush that follows is all
 * the acknowledgement there is.
 */

/** How long a subject's stream (or its having none) is believed: a stream added later is used within 30 s. */
const STREAM_TTL_MS = 30_000;
/** Subjects remembered per connection; past it the memory starts over (one more lookup each). */
const STREAM_CACHE_MAX = 1024;

/** One pooled connection and what is known through it. */
type Connection = {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Subject → the stream that takes it (null: none), looked up once per STREAM_TTL_MS. */
  streams: Map<string, { stream: Promise<string | null>; until: number }>;
  /** Sends waiting on this connection, told when the server refuses a publish to a subject. */
  refusals: Set<(subject: string) => void>;
  /** What the server sent since it last answered (inbound.ts). */
  inbound: InboundLimit;
};

/** The client's errors that say the server refused the credentials. */
const AUTH_CODES = new Set([
  "AUTHORIZATION_VIOLATION",
  "AUTHENTICATION_EXPIRED",
  "AUTHENTICATION_TIMEOUT",
  "ACCOUNT_EXPIRED",
]);
/** The client's errors that say the connection is gone: it leaves the pool. */
const CLOSED_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_DRAINING", "DISCONNECT"]);

export function createNatsTransport(options: { maxConnections?: number } = {}): Transport<NatsTarget> {
  const pool = new ConnectionPool<Connection>(options.maxConnections ?? 64, (c) => c.nc.close());

  async function open(target: NatsTarget, context: SendContext, key: string): Promise<Connection> {
    const address = await context.resolve(target.host);
    const credentials = context.credentials;
    const connecting = connect({
      servers: isIPv6(address) ? `[${address}]:${target.port}` : `${address}:${target.port}`,
      name: "herald",
      // One try: the pool opens a new connection on the next send; a client reconnecting in
      // the background would also wander to servers the SSRF guard never saw.
      reconnect: false,
      maxReconnectAttempts: 0,
      waitOnFirstConnect: false,
      ignoreClusterUpdates: true,
      resolve: false,
      timeout: context.timeoutMs,
      // The certificate is checked against the URL's host, not the address connected to.
      tls: target.tls ? tlsOptions(target.host) : null,
      // NATS URLs carry a token as a user with no password (nats://token@host).
      ...(credentials?.password
        ? { user: credentials.username, pass: credentials.password }
        : credentials
          ? { token: credentials.username }
          : {}),
    } satisfies ConnectionOptions);
    let nc: NatsConnection;
    try {
      nc = await untilAborted(connecting, context.signal, where(target));
    } catch (err) {
      // Given up on: if it opens after all, it is closed, never left behind.
      void connecting.then((late) => late.close()).catch(() => {});
      throw connectError(err, target);
    }
    let jsm: JetStreamManager;
    try {
      // No API check on opening: a server without JetStream still takes core publishes.
      jsm = await nc.jetstreamManager({ checkAPI: false, timeout: context.timeoutMs });
    } catch (err) {
      void nc.close().catch(() => {});
      throw err;
    }
    const connection: Connection = {
      nc,
      js: nc.jetstream(),
      jsm,
      streams: new Map(),
      refusals: new Set(),
      inbound: inboundOf(nc),
    };
    // A connection closed by the server or the network (no reconnecting) leaves the pool.
    void nc.closed().then(() => pool.drop(key, connection));
    void watchRefusals(connection);
    return connection;
  }

  return {
    type: "nats",
    async send(target, message, context) {
      const key = connectionKey(["nats", target.tls, target.host, target.port], context.credentials);
      const c = await pool.acquire(key, () => open(target, context, key), context.signal, where(target));
      let onRefusal: ((subject: string) => void) | undefined;
      const refused = new Promise<never>((_, reject) => {
        onRefusal = (subject) => {
          if (subject === target.subject)
            reject(
              new TransportError(
                "rejected",
                `the server refused publishing to subject ${target.subject} (permissions violation)`,
              ),
            );
        };
        c.refusals.add(onRefusal);
      });
      refused.catch(() => {});
      const settle = c.inbound.sending(messageBytes(message));
      try {
        const receipt = await untilAborted(
          Promise.race([publish(c, target, message, context), refused]),
          context.signal,
          where(target),
        );
        settle(true);
        return receipt;
      } catch (err) {
        const violation = c.inbound.violation;
        if (violation) throw new TransportError(violation.kind, `${where(target)}: ${violation.message}`);
        const failure = publishError(err, target);
        settle(failure instanceof TransportError && failure.kind === "rejected");
        // A connection that stopped answering (or closed) is not kept: the next send reconnects.
        const code = (err as { code?: string }).code ?? "";
        if ((failure instanceof TransportError && failure.kind === "timeout") || CLOSED_CODES.has(code))
          pool.drop(key, c);
        throw failure;
      } finally {
        if (onRefusal) c.refusals.delete(onRefusal);
      }
    },
    close: () => pool.close(),
  };
}

async function publish(
  c: Connection,
  target: NatsTarget,
  message: Message,
  context: SendContext,
): Promise<Receipt> {
  const body = Buffer.from(message.body, "utf8");
  const headers = messageHeaders(message);
  const stream = await streamOf(c, target.subject);
  if (stream !== null) {
    try {
      const ack = await c.js.publish(target.subject, body, {
        msgID: message.eventId,
        headers,
        timeout: context.timeoutMs,
      });
      return {
        detail: `stream ${ack.stream}, sequence ${ack.seq}${ack.duplicate ? " (a duplicate of the event id: stored once)" : ""}`,
      };
    } catch (err) {
      if (isNoResponders(err)) {
        // The stream went away (or has no leader now): ask again on the next send.
        c.streams.delete(target.subject);
        throw new TransportError("rejected", `no JetStream stream answered for subject ${target.subject}`);
      }
      throw err;
    }
  }
  c.nc.publish(target.subject, body, { headers });
  await c.nc.flush();
  // A refusal (-ERR) arrives before the flush's PONG but reaches us through the status
  // iterator's promises: one turn of the event loop lets it land first.
  await nextTurn();
  return { detail: `subject ${target.subject} (core NATS, no acknowledgement)` };
}

/** The Standard Webhooks headers and the endpoint's own, and Nats-Msg-Id for JetStream's deduplication. */
function messageHeaders(message: Message): MsgHdrs {
  const headers = natsHeaders();
  for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
  headers.set("Nats-Msg-Id", message.eventId);
  return headers;
}

/** The stream that takes the subject, or null: asked once per STREAM_TTL_MS, concurrent sends sharing the question. */
function streamOf(c: Connection, subject: string): Promise<string | null> {
  const now = Date.now();
  const known = c.streams.get(subject);
  if (known && known.until > now) return known.stream;
  if (c.streams.size >= STREAM_CACHE_MAX) c.streams.clear();
  const stream = c.jsm.streams.find(subject).then(
    (name) => name,
    (err) => {
      const code = (err as { code?: string }).code;
      // No stream takes it; no JetStream on the server (no responders, with no API error);
      // or the account may not ask JetStream: each leaves core NATS.
      if ((err as Error).message === "no stream matches subject") return null;
      if (isNoResponders(err) || code === "PERMISSIONS_VIOLATION") return null;
      throw err;
    },
  );
  const entry = { stream, until: now + STREAM_TTL_MS };
  c.streams.set(subject, entry);
  stream.catch(() => {
    if (c.streams.get(subject) === entry) c.streams.delete(subject);
  });
  return stream;
}

/** A 503 of the server's own (nobody subscribed), not a JetStream API error, which also uses 503. */
function isNoResponders(err: unknown): boolean {
  return (err as { code?: string }).code === "503" && !(err as { api_error?: unknown }).api_error;
}

/** Tells each waiting send of the connection about a publish the server refused. */
async function watchRefusals(c: Connection): Promise<void> {
  try {
    for await (const status of c.nc.status()) {
      const context = status.type === Events.Error ? status.permissionContext : undefined;
      if (context?.operation === "publish") for (const refused of c.refusals) refused(context.subject);
    }
  } catch {
    // The iterator ends with the connection; nothing to report.
  }
}

/** nats.js passes its TLS options on to Node's tls.connect, these included. */
type NodeTlsOptions = TlsOptions & Pick<ConnectionOptionsTls, "host" | "servername">;

function tlsOptions(host: string): NodeTlsOptions {
  // Node's names: an IP literal is checked as `host` (SNI takes no IP), a name as `servername`.
  return isIP(host) ? { host } : { servername: host };
}

function where(target: NatsTarget): string {
  return `${target.tls ? "tls" : "nats"}://${target.host}:${target.port} subject ${target.subject}`;
}

/** Errors of connecting, in the attempt's terms; the client's messages carry no credentials. */
function connectError(err: unknown, target: NatsTarget): unknown {
  if (err instanceof TransportError) return new TransportError(err.kind, `${where(target)}: ${err.message}`);
  const code = (err as { code?: string }).code ?? "";
  if (AUTH_CODES.has(code))
    return new TransportError("auth_error", `${where(target)}: the server refused the credentials (${code})`);
  if (code === "TIMEOUT" || code === "CONNECTION_TIMEOUT")
    return new TransportError("timeout", `${where(target)}: no answer to connecting in time`);
  if (code === "SERVER_OPT_NA" && target.tls)
    return Object.assign(new Error(`${where(target)}: the server offers no TLS`), {
      code: "ERR_TLS_NOT_OFFERED",
    });
  return err;
}

/** Errors of publishing: the server's refusals are `rejected`, the client's own timeouts `timeout`. */
function publishError(err: unknown, target: NatsTarget): unknown {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string; message?: string; api_error?: { description?: string } };
  if (e.api_error)
    return new TransportError("rejected", `JetStream refused the message: ${e.api_error.description}`);
  if (e.code === "JESTREAM_INVALID_ACK")
    return new TransportError(
      "rejected",
      `the reply to ${where(target)} was not a JetStream acknowledgement`,
    );
  if (e.code === "MAX_PAYLOAD_EXCEEDED")
    return new TransportError("rejected", `the message is larger than the server's max_payload`);
  if (e.code === "BAD_HEADER")
    return new TransportError("rejected", `a header cannot be sent as a NATS header: ${e.message}`);
  if (e.code === "PERMISSIONS_VIOLATION")
    return new TransportError("rejected", `the server refused publishing to subject ${target.subject}`);
  if (e.code === "TIMEOUT")
    return new TransportError("timeout", `no acknowledgement from ${where(target)} in time`);
  return err;
}
