import type { Duplex } from "node:stream";
import { TransportError } from "./types.ts";

/**
 * What a destination's server may send on one connection without answering a send: 1 MiB,
 * plus, where the protocol returns messages (RabbitMQ's basic.return), the size of those in
 * flight on it.
 *
 * Every client library buffers a frame, reply or packet until it has all of it, and none bounds
 * that: a Redis bulk reply, a NATS MSG, an AMQP content body or an MQTT packet may announce any
 * size. On a byte stream a frame being received holds back every later answer, so counting
 * the bytes since the last answer bounds it. Where frames of several kinds interleave (AMQP's
 * content bodies and acknowledgements on one channel), the transport says when the count may
 * start over (`canReset`). Past the bound the socket is destroyed, which fails what is in
 * flight on it as a `connection_error`, and the pool opens a new connection for the next send.
 *
 * What the count cannot see, each transport checks itself: replies that make a library
 * allocate more than they weigh (redisReplies.ts), frames it keeps without end (amqpFrames.ts,
 * MQTT's incoming publishes). They end the connection through `end`.
 */
export const INBOUND_SLACK_BYTES = 1 << 20;

export type InboundOptions = {
  /** The server may send back the messages in flight (RabbitMQ's basic.return). */
  echoes?: boolean;
  /** The bytes allowed since the last answer; INBOUND_SLACK_BYTES unless given. */
  slackBytes?: number;
  /** Whether an answer may start the count over now (false while a frame is part received). */
  canReset?: () => boolean;
};

export class InboundLimit {
  private received = 0;
  private inFlight = 0;
  private socket: Duplex | null = null;
  private readonly slack: number;
  /** Set once the server broke a rule of this module or of its transport: what a send on the connection throws. */
  violation: TransportError | null = null;

  constructor(
    private readonly where: string,
    private readonly options: InboundOptions = {},
  ) {
    this.slack = options.slackBytes ?? INBOUND_SLACK_BYTES;
  }

  /** The bytes of the messages in flight on the connection. */
  get inFlightBytes(): number {
    return this.inFlight;
  }

  /**
   * Counts what arrives on `socket` (in either reading mode: a stream read with read() emits
   * 'data' too) and destroys it past the bound. The library's own listeners have the chunk
   * that crossed it, one socket read at most.
   */
  watch(socket: Duplex): void {
    this.socket = socket;
    socket.on("data", (chunk: Buffer | string) => {
      this.received += chunk.length;
      const bound = this.slack + (this.options.echoes ? this.inFlight : 0);
      if (this.violation || this.received <= bound) return;
      this.end(`sent more than ${bound} bytes without answering a send`);
    });
  }

  /** Ends the connection: the server broke a rule (`what` it did), which every send on it is told. */
  end(what: string): TransportError {
    this.violation ??= new TransportError(
      "connection_error",
      `${this.where} ${what}; the connection was closed`,
    );
    this.socket?.destroy(this.violation);
    return this.violation;
  }

  /**
   * A send of `bytes` is in flight. Call the returned function when it settles, with whether
   * the server answered it (an acknowledgement or a refusal, not a timeout): what it sent up to
   * an answer was answers. An answer while more of ours than the sends in flight could explain
   * is still unwritten (the server answers without reading, and our writes pile up in memory)
   * ends the connection.
   */
  sending(bytes: number): (answered: boolean) => void {
    this.inFlight += bytes;
    let settled = false;
    return (answered) => {
      if (settled) return;
      settled = true;
      this.inFlight -= bytes;
      if (!answered || this.violation) return;
      const unwritten = this.socket?.writableLength ?? 0;
      if (unwritten > this.slack + this.inFlight) {
        this.end(`answered while ${unwritten} bytes of ours were still unread`);
        return;
      }
      if (this.options.canReset?.() ?? true) this.received = 0;
    };
  }
}

/** A message's size as the server could send it back: its body and headers. */
export function messageBytes(message: { body: string; headers: Record<string, string> }): number {
  let bytes = Buffer.byteLength(message.body);
  for (const [name, value] of Object.entries(message.headers))
    bytes += name.length + Buffer.byteLength(value) + 8;
  return bytes;
}
