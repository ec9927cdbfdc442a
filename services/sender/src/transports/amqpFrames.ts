import { createRequire } from "node:module";
import type { ChannelModel } from "amqplib";
import type { InboundLimit } from "./inbound.ts";

/**
 * What a RabbitMQ destination may send on a connection of ours, checked on each frame before
 * amqplib takes it. amqplib gathers a message's content per channel while acknowledgements go on
 * around it, and records acknowledgements of delivery tags it never used: both let a server
 * grow the sender's memory while answering every publish. So:
 * - a message may come back (basic.return) no larger than the messages in flight; its content
 *   being received holds the count of bytes (inbound.ts) from starting over;
 * - a message may not be delivered (Herald consumes none);
 * - an acknowledgement must be of a publish still waiting for one.
 * A frame that breaks one ends the connection (InboundLimit.end) and is not passed on.
 */

type Frame = {
  id?: number;
  channel: number;
  size?: number;
  content?: Buffer;
  fields?: Record<string, unknown>;
};
type Channel = { lwm: number; unconfirmed: unknown[] };
type Connection = {
  accept(frame: Frame): unknown;
  channels: ({ channel: Channel } | undefined)[];
};

const defs = createRequire(createRequire(import.meta.url).resolve("amqplib"))("./lib/defs.js") as Record<
  "BasicReturn" | "BasicDeliver" | "BasicAck" | "BasicNack" | "BasicProperties",
  number
>;

/** Guards the connection's frames; returns whether a returned message's content is part received. */
export function guardFrames(model: ChannelModel, inbound: InboundLimit): () => boolean {
  const connection = model.connection as unknown as Connection;
  let remaining = 0;
  const accept = connection.accept;
  connection.accept = function (this: Connection, frame: Frame) {
    const problem = check(frame);
    if (problem) {
      inbound.end(problem);
      return;
    }
    return accept.call(this, frame);
  };

  function check(frame: Frame): string | null {
    switch (frame.id) {
      case defs.BasicDeliver:
        return "delivered a message, though Herald consumes none";
      case defs.BasicProperties: {
        const size = frame.size ?? 0;
        if (size > inbound.inFlightBytes)
          return `returned a message of ${size} bytes, more than the ${inbound.inFlightBytes} in flight`;
        remaining += size;
        return null;
      }
      case defs.BasicAck:
      case defs.BasicNack: {
        const channel = connection.channels[frame.channel]?.channel;
        const tag = Number(frame.fields?.deliveryTag);
        if (!channel || !Array.isArray(channel.unconfirmed)) return null;
        const waiting = tag >= channel.lwm && tag < channel.lwm + channel.unconfirmed.length;
        return waiting ? null : `acknowledged delivery tag ${tag}, which no publish is waiting on`;
      }
      case undefined:
        remaining = Math.max(0, remaining - (frame.content?.length ?? 0));
        return null;
      default:
        return null;
    }
  }

  return () => remaining > 0;
}
