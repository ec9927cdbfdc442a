import { randomBytes } from "node:crypto";
import { isIP, connect as netConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { MqttTarget } from "@herald/contracts/destinations";
import {
  ErrorWithReasonCode,
  type IClientPublishOptions,
  type IConnackPacket,
  MqttClient,
  ReasonCodes,
} from "mqtt";
import { INBOUND_SLACK_BYTES, InboundLimit, messageBytes } from "./inbound.ts";
import { ConnectionPool, connectionKey, untilAborted } from "./pool.ts";
import { type Message, type Receipt, type SendContext, type Transport, TransportError } from "./types.ts";

/**
 * MQTT destinations (`mqtt://` and `mqtts://`): each delivery is a PUBLISH to the URL's topic
 * at its QoS (1: PUBACK, 2: PUBREC…PUBCOMP), over MQTT 5 so that the Standard Webhooks headers
 * ride as user properties (MQTT 3.1.1 has none: a server that speaks only 3.1.1 is refused,
 * as the signature could not travel with the message). The body is the payload, byte for byte;
 * the event's id is also the correlation data.
 */

/** CONNACK reason codes that mean the credentials were refused (3.1.1's 4 and 5, MQTT 5's). */
const AUTH_REFUSED = new Set([0x04, 0x05, 0x86, 0x87, 0x8c]);
/** CONNACK reason codes that say "not now": unavailable, busy, connection rate exceeded. */
const UNAVAILABLE = new Set([0x03, 0x88, 0x89, 0x9f]);
/** CONNACK reason codes of a server that speaks no MQTT 5 (3.1.1's 1, MQTT 5's 0x84). */
const NO_MQTT5 = new Set([0x01, 0x84]);
/**
 * DISCONNECT reason codes caused by the message itself (not authorized, topic name invalid,
 * packet too large, quota exceeded, payload format invalid, retain or QoS not supported): the
 * message is refused, not the connection broken.
 */
const MESSAGE_REFUSED = new Set([0x87, 0x90, 0x95, 0x97, 0x99, 0x9a, 0x9b]);

/** 1 s for a closing connection to send DISCONNECT and see the socket close; then it is cut. */
const CLOSE_GRACE_MS = 1000;

const reason = (code: number) =>
  `${ReasonCodes[code as keyof typeof ReasonCodes] || "reason"} (0x${code.toString(16).padStart(2, "0")})`;

/** One connection to a server, and its share of the server's Receive Maximum. */
type Connection = {
  client: MqttClient;
  /** Lost or not answering: closed at once, without waiting for what it has in flight. */
  broken: boolean;
  /** Rejects when the connection is lost: every wait on it races this. */
  lost: Promise<never>;
  /** From CONNACK: what the server takes (absent: no limit). */
  maximumQoS: number | undefined;
  maximumPacketSize: number | undefined;
  /**
   * Publishes awaiting their acknowledgement, at most the server's Receive Maximum (Mosquitto:
   * 20): one more QoS 2 PUBLISH is refused with 0x97 "Quota exceeded". Others wait their turn.
   */
  inFlight: number;
  receiveMaximum: number;
  waiting: (() => void)[];
  /** What the server sent since it last answered (inbound.ts). */
  inbound: InboundLimit;
};

export type MqttTransport = Transport<MqttTarget> & {
  /** Connections pooled now (open or opening). */
  readonly connections: number;
};

export function createMqttTransport(options: { maxConnections?: number } = {}): MqttTransport {
  const pool = new ConnectionPool<Connection>(options.maxConnections ?? 64, end);

  /** Connects to the address the guard resolved, and waits for CONNACK or the attempt's end. */
  async function open(target: MqttTarget, context: SendContext, key: string, where: string) {
    const address = await untilAborted(context.resolve(target.host), context.signal, where);
    const credentials = context.credentials;
    // Counted from the first byte, CONNACK included (mqtt.js reads any packet size it is told).
    const inbound = new InboundLimit(where);
    const client = new MqttClient(
      () => {
        const socket = target.tls
          ? // SNI and the certificate's check by the URL's host, not the address connected to.
            tlsConnect({
              host: address,
              port: target.port,
              ...(isIP(target.host) ? {} : { servername: target.host }),
            })
          : netConnect({ host: address, port: target.port });
        inbound.watch(socket);
        return socket;
      },
      {
        protocolVersion: 5,
        // The server is told what we take; a server that ignores it meets inbound.ts's bound.
        properties: { maximumPacketSize: INBOUND_SLACK_BYTES, receiveMaximum: 1 },
        // 22 of [0-9a-z]: within the 23 characters every server must accept.
        clientId: `herald${randomBytes(8).toString("hex")}`,
        clean: true,
        // No reconnecting in the background: a lost connection leaves the pool, the next send opens one.
        reconnectPeriod: 0,
        resubscribe: false,
        queueQoSZero: false,
        // A backstop only: the attempt's signal ends the wait first.
        connectTimeout: context.timeoutMs,
        ...(credentials?.username ? { username: credentials.username } : {}),
        ...(credentials?.password ? { password: credentials.password } : {}),
      },
    );
    // Never an unhandled 'error': each one is kept for the reason the connection was lost.
    let lastError: unknown = null;
    let disconnectCode: number | null = null;
    client.on("error", (err) => {
      lastError = err;
    });
    client.on("disconnect", (packet) => {
      disconnectCode = packet.reasonCode ?? null;
    });
    // Herald subscribes to nothing: a PUBLISH from the server is no answer, and mqtt.js would
    // keep each QoS 2 one until a PUBREL that need never come.
    client.on("packetreceive", (packet) => {
      if (packet.cmd === "publish") inbound.end("sent a PUBLISH, though Herald subscribes to nothing");
    });

    const connack = await new Promise<IConnackPacket>((resolve, reject) => {
      const settle = (err: unknown) => {
        client.removeListener("connect", onConnect);
        client.removeListener("error", onError);
        client.removeListener("close", onClose);
        context.signal.removeEventListener("abort", onAbort);
        if (err === null) return;
        client.end(true);
        reject(err);
      };
      const onConnect = (packet: IConnackPacket) => {
        settle(null);
        resolve(packet);
      };
      const onError = (err: Error) =>
        settle(
          err instanceof ErrorWithReasonCode
            ? refusal(err.code, where)
            : err.message === "connack timeout"
              ? new TransportError("timeout", `no CONNACK from ${where} in time`)
              : err,
        );
      const onClose = () =>
        settle(
          inbound.violation ??
            lastError ??
            new TransportError("connection_error", `${where} closed the connection`),
        );
      const onAbort = () => settle(new TransportError("timeout", `no CONNACK from ${where} in time`));
      client.on("connect", onConnect);
      client.on("error", onError);
      client.on("close", onClose);
      if (context.signal.aborted) onAbort();
      else context.signal.addEventListener("abort", onAbort, { once: true });
    });

    let loseWith: (err: unknown) => void = () => {};
    const lost = new Promise<never>((_, reject) => {
      loseWith = reject;
    });
    lost.catch(() => {});
    const connection: Connection = {
      client,
      broken: false,
      lost,
      maximumQoS: connack.properties?.maximumQoS,
      maximumPacketSize: connack.properties?.maximumPacketSize,
      inFlight: 0,
      receiveMaximum: connack.properties?.receiveMaximum ?? 65_535,
      waiting: [],
      inbound,
    };
    client.once("close", () => {
      connection.broken = true;
      pool.drop(key, connection);
      loseWith(lostError(disconnectCode, lastError, where));
      // Those waiting for a turn take it, and find the connection lost.
      for (const give of connection.waiting.splice(0)) give();
    });
    // An error after CONNACK is the connection's (a publish's own failure comes to its callback).
    client.on("error", () => {
      connection.broken = true;
      pool.drop(key, connection);
    });
    return connection;
  }

  return {
    type: "mqtt",
    get connections() {
      return pool.size;
    },

    async send(target: MqttTarget, message: Message, context: SendContext): Promise<Receipt> {
      const where = `MQTT server ${target.host}:${target.port}`;
      const key = connectionKey(["mqtt", target.tls, target.host, target.port], context.credentials);
      const connection = await pool.acquire(
        key,
        () => open(target, context, key, where),
        context.signal,
        where,
      );
      try {
        return await publish(connection, target, message, context.signal, where);
      } catch (err) {
        // No acknowledgement in time: the connection may be half-open; the next send opens another.
        if (err instanceof TransportError && err.kind === "timeout") {
          connection.broken = true;
          pool.drop(key, connection);
        }
        throw err;
      }
    },

    close: () => pool.close(),
  };
}

async function publish(
  connection: Connection,
  target: MqttTarget,
  message: Message,
  signal: AbortSignal,
  where: string,
): Promise<Receipt> {
  const { topic, qos } = target;
  if (connection.maximumQoS !== undefined && qos > connection.maximumQoS)
    throw new TransportError(
      "rejected",
      `${where} takes QoS ${connection.maximumQoS} at most; the URL asks for QoS ${qos}`,
    );
  const payload = Buffer.from(message.body, "utf8");
  const properties = {
    payloadFormatIndicator: true,
    contentType: message.headers["content-type"] ?? "application/json",
    correlationData: Buffer.from(message.eventId, "utf8"),
    userProperties: { ...message.headers },
  };
  const size = publishSize(topic, payload, properties);
  // The server would cut the connection (0x95), and every publish on it with this one.
  if (connection.maximumPacketSize !== undefined && size > connection.maximumPacketSize)
    throw new TransportError(
      "rejected",
      `the message is ${size} bytes as an MQTT packet; ${where} takes ${connection.maximumPacketSize} at most`,
    );
  const opts: IClientPublishOptions = { qos, retain: false, properties };
  await Promise.race([untilAborted(turn(connection, signal, where), signal, where), connection.lost]);
  const settle = connection.inbound.sending(messageBytes(message));
  try {
    const packet = await untilAborted(
      Promise.race([connection.client.publishAsync(topic, payload, opts), connection.lost]),
      signal,
      where,
    );
    settle(true);
    const packetId = (packet as { messageId?: number } | undefined)?.messageId;
    return { detail: `topic ${topic}, QoS ${qos}, packet id ${packetId}` };
  } catch (err) {
    settle(err instanceof ErrorWithReasonCode);
    if (connection.inbound.violation) throw connection.inbound.violation;
    if (err instanceof ErrorWithReasonCode)
      throw new TransportError("rejected", `${where} refused the message on ${topic}: ${reason(err.code)}`);
    // The client's own ("Connection closed", "client disconnecting"): the connection, not the message.
    if (err instanceof Error && !(err instanceof TransportError) && !("code" in err))
      throw new TransportError("connection_error", `${where}: ${err.message}`);
    throw err;
  } finally {
    const next = connection.waiting.shift();
    if (next) next();
    else connection.inFlight--;
  }
}

/** A place among the connection's publishes in flight; waits while the server's limit is reached. */
function turn(connection: Connection, signal: AbortSignal, where: string): Promise<void> {
  if (connection.inFlight < connection.receiveMaximum) {
    connection.inFlight++;
    return Promise.resolve();
  }
  return new Promise<void>((resolve, reject) => {
    // The place passes from the publish that ends to this one: inFlight stays as it is.
    const give = () => {
      signal.removeEventListener("abort", quit);
      resolve();
    };
    const quit = () => {
      const at = connection.waiting.indexOf(give);
      if (at >= 0) connection.waiting.splice(at, 1);
      reject(new TransportError("timeout", `no acknowledgement from ${where} in time`));
    };
    connection.waiting.push(give);
    signal.addEventListener("abort", quit, { once: true });
  });
}

/** Why CONNACK refused the connection, as the attempt's error. */
function refusal(code: number, where: string): TransportError {
  if (AUTH_REFUSED.has(code))
    return new TransportError("auth_error", `${where} refused the credentials: ${reason(code)}`);
  if (UNAVAILABLE.has(code))
    return new TransportError("connection_error", `${where} refused the connection: ${reason(code)}`);
  if (NO_MQTT5.has(code))
    return new TransportError(
      "rejected",
      `${where} does not speak MQTT 5, which carries the webhook headers as user properties: ${reason(code)}`,
    );
  return new TransportError("rejected", `${where} refused the connection: ${reason(code)}`);
}

/** Why an open connection was lost, for the publishes that were waiting on it. */
function lostError(disconnectCode: number | null, lastError: unknown, where: string): unknown {
  if (disconnectCode !== null && MESSAGE_REFUSED.has(disconnectCode))
    return new TransportError("rejected", `${where} refused a message: ${reason(disconnectCode)}`);
  if (disconnectCode !== null && disconnectCode >= 0x80)
    return new TransportError("connection_error", `${where} disconnected: ${reason(disconnectCode)}`);
  if (lastError instanceof Error && "code" in lastError && typeof lastError.code === "string")
    return lastError;
  return new TransportError("connection_error", `${where} closed the connection`);
}

/**
 * Sends DISCONNECT once what is in flight is acknowledged, and waits for the socket to close,
 * for CLOSE_GRACE_MS at most; a broken connection is cut at once.
 */
function end(connection: Connection): Promise<void> {
  const { client } = connection;
  return new Promise<void>((resolve) => {
    if (connection.broken || !client.connected) {
      client.end(true, () => resolve());
      return;
    }
    const timer = setTimeout(() => {
      client.stream?.destroy();
      resolve();
    }, CLOSE_GRACE_MS);
    client.end(false, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A variable byte integer's length (MQTT 5, 1.5.5). */
const varintLength = (n: number) => (n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4);

/** The PUBLISH packet's whole size as the server's Maximum Packet Size counts it (MQTT 5, 3.3). */
function publishSize(
  topic: string,
  payload: Buffer,
  properties: { contentType: string; correlationData: Buffer; userProperties: Record<string, string> },
): number {
  let props = 2 + (3 + Buffer.byteLength(properties.contentType)) + (3 + properties.correlationData.length);
  for (const [name, value] of Object.entries(properties.userProperties))
    props += 5 + Buffer.byteLength(name) + Buffer.byteLength(value);
  const remaining = 2 + Buffer.byteLength(topic) + 2 + varintLength(props) + props + payload.length;
  return 1 + varintLength(remaining) + remaining;
}
