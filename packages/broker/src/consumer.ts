import { type MessageName, type MessageTypes, parseMessage } from "@herald/contracts";
import { contextFrom, inSpan, type Logger, SpanKind } from "@herald/runtime";
import type { Channel, ChannelModel, ConsumeMessage } from "amqplib";

export type Received<K extends MessageName> = {
  name: K;
  body: MessageTypes[K];
  headers: Record<string, unknown>;
  redelivered: boolean;
};

export type Handlers = { [K in MessageName]?: (message: Received<K>) => Promise<void> };

/** Thrown by a handler for a message that can never succeed: it is dead-lettered, not retried. */
export class PermanentError extends Error {}

export type ConsumerOptions = { queue: string; prefetch: number; handlers: Handlers; logger: Logger };

/**
 * One consumer on its own channel, re-attached on every connection. A message is acked only
 * after its handler finished (the work is durable). A message that does not parse, or whose
 * handler throws PermanentError, is dead-lettered. Any other error is transient (database
 * or broker hiccup): the handler is retried in place with backoff (200 ms doubling to 10 s),
 * holding the message, so an outage does not burn through the queue's delivery limit.
 */
export class Consumer {
  private channel: Channel | null = null;
  private tag: string | null = null;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: ConsumerOptions) {}

  async attach(model: ChannelModel): Promise<void> {
    if (this.stopped) return;
    const channel = await model.createChannel();
    channel.on("error", () => {});
    channel.on("close", () => {
      if (this.channel === channel) this.channel = null;
    });
    await channel.prefetch(this.options.prefetch);
    this.channel = channel;
    const { consumerTag } = await channel.consume(this.options.queue, (msg) => {
      if (!msg) return;
      const work = this.handle(channel, msg);
      this.inFlight.add(work);
      void work.finally(() => this.inFlight.delete(work));
    });
    this.tag = consumerTag;
  }

  private handle(channel: Channel, msg: ConsumeMessage): Promise<void> {
    const name = (msg.properties.type ?? msg.fields.routingKey) as string;
    // A CONSUMER span, child of the publisher's (from the message's traceparent).
    return inSpan(
      `process ${name}`,
      {
        kind: SpanKind.CONSUMER,
        parent: contextFrom(msg.properties.headers),
        attributes: {
          "messaging.system": "rabbitmq",
          "messaging.operation.type": "process",
          "messaging.destination.name": this.options.queue,
        },
      },
      () => this.run(channel, msg),
    );
  }

  private async run(channel: Channel, msg: ConsumeMessage): Promise<void> {
    const { logger, handlers, queue } = this.options;
    const name = (msg.properties.type ?? msg.fields.routingKey) as MessageName;
    const handler = handlers[name] as ((m: Received<MessageName>) => Promise<void>) | undefined;
    const parsed = handler
      ? parseMessage(name, msg.content)
      : { ok: false as const, error: `no handler for '${name}' on ${queue}` };
    if (!parsed.ok || !handler) {
      logger.error(
        { queue, name, reason: parsed.ok ? "no handler" : parsed.error },
        "dead-lettering a message that cannot be handled",
      );
      channel.nack(msg, false, false);
      return;
    }
    const received: Received<MessageName> = {
      name,
      body: parsed.value,
      headers: (msg.properties.headers ?? {}) as Record<string, unknown>,
      redelivered: msg.fields.redelivered,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        await handler(received);
        if (this.channel === channel) channel.ack(msg);
        return;
      } catch (err) {
        if (err instanceof PermanentError) {
          logger.error({ queue, name, err: err.message }, "dead-lettering a message its handler refused");
          if (this.channel === channel) channel.nack(msg, false, false);
          return;
        }
        // The channel is gone: the broker redelivers the message to whoever consumes next.
        if (this.channel !== channel) return;
        const waitMs = Math.min(200 * 2 ** attempt, 10_000);
        logger.warn(
          { queue, name, err: (err as Error).message, retryInMs: waitMs },
          "handler failed; retrying",
        );
        await new Promise((r) => setTimeout(r, waitMs));
        if (this.channel !== channel) return;
      }
    }
  }

  /** Stops taking messages and waits for the ones in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    const channel = this.channel;
    if (channel && this.tag) await channel.cancel(this.tag).catch(() => {});
    await Promise.all([...this.inFlight]);
    if (channel) await channel.close().catch(() => {});
    this.channel = null;
  }

  get busy(): number {
    return this.inFlight.size;
  }
}
