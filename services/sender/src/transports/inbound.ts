import type { Duplex } from "node:stream";
import { TransportError } from "./types.ts";

/**
 * What a destination's server may send on one connection without answering a send: 1 MiB, plus
 * the size of each message in flight on it (an AMQP basic.return carries the message back).
 *
 * Every client library buffers a frame, reply or packet until it has all of it, and none bounds
 * that: a Redis bulk reply, a NATS MSG, an AMQP content body or an MQTT packet may announce any
 * size. A hostile destination could grow the sender's memory by as much as it likes, on a
 * connection the pool keeps. While such a frame is arriving nothing else on the connection can
 * be parsed, so no send on it is answered: counting the bytes since the last answer bounds it,
 * whatever the protocol. Past the bound the socket is destroyed, which fails what is in flight
 * on it as a `connection_error` (`overflow`), and the pool opens a new connection for the next.
 */
export const INBOUND_SLACK_BYTES = 1 << 20;

export class InboundLimit {
  private received = 0;
  private inFlight = 0;
  /** Set once the server sent past the bound; what a send on the connection throws then. */
  overflow: TransportError | null = null;

  constructor(private readonly where: string) {}

  /**
   * Counts what arrives on `socket` (in either reading mode: a stream read with read() emits
   * 'data' too) and destroys it past the bound. The library's own listeners have the chunk
   * that crossed it, one socket read at most.
   */
  watch(socket: Duplex): void {
    socket.on("data", (chunk: Buffer | string) => {
      this.received += chunk.length;
      const bound = INBOUND_SLACK_BYTES + this.inFlight;
      if (this.overflow || this.received <= bound) return;
      this.overflow = new TransportError(
        "connection_error",
        `${this.where} sent more than ${bound} bytes without answering a send; the connection was closed`,
      );
      socket.destroy(this.overflow);
    });
  }

  /**
   * A send of `bytes` is in flight: the server may send that much more. Call the returned
   * function when it settles, with whether the server answered it (an acknowledgement or a
   * refusal, not a timeout): what it sent up to an answer was answers.
   */
  sending(bytes: number): (answered: boolean) => void {
    this.inFlight += bytes;
    let settled = false;
    return (answered) => {
      if (settled) return;
      settled = true;
      this.inFlight -= bytes;
      if (answered) this.received = 0;
    };
  }

  /** The server answered something other than a send (a lookup, a handshake step). */
  answered(): void {
    this.received = 0;
  }
}

/** A message's size as the server could send it back: its body and headers. */
export function messageBytes(message: { body: string; headers: Record<string, string> }): number {
  let bytes = Buffer.byteLength(message.body);
  for (const [name, value] of Object.entries(message.headers))
    bytes += name.length + Buffer.byteLength(value) + 8;
  return bytes;
}
