import { type MessageName, type MessageTypes, parseMessage } from "@herald/contracts";
import {
  type Context,
  contextFrom,
  type Logger,
  context as otelContext,
  SpanKind,
  SpanStatusCode,
  trace,
  tracer,
} from "@herald/runtime";
import type { Channel, ChannelModel, ConsumeMessage } from "amqplib";

export type Received<K extends MessageName> = {
  name: K;
  body: MessageTypes[K];
  headers: Record<string, unknown>;
  redelivered: boolean;
  /** The context of this message's CONSUMER span: publish under it to stay in its trace. */
  context: Context;
};

export type Handlers = { [K in MessageName]?: (message: Received<K>) => Promise<void> };

/** Handles many messages of one kind at once: one round of SQL for a whole batch. */
export type BatchSpec<K extends MessageName = MessageName> = {
  name: K;
  handler: (messages: Received<K>[]) => Promise<void>;
  /** Flush when this many are in hand… */
  maxSize: number;
  /** …or this long after the first arrived. */
  maxWaitMs: number;
};

/** Thrown by a handler for a message that can never succeed: it is dead-lettered, not retried. */
export class PermanentError extends Error {}

export type ConsumerOptions = { queue: string; prefetch: number; logger: Logger } & (
  | { handlers: Handlers }
  | { batch: BatchSpec }
);

/** A message in hand, with the channel it came on: only that channel can ack it. */
type Held = {
  channel: Channel;
  msg: ConsumeMessage;
  received: Received<MessageName>;
  end: (error?: Error) => void;
};

/**
 * One consumer on its own channel, re-attached on every connection. A message is acked only
 * after its handler finished (the work is durable). A message that does not parse, or whose
 * handler throws PermanentError, is dead-lettered. Any other error is transient (database
 * or broker hiccup): the handler is retried in place with backoff (200 ms doubling to 10 s),
 * holding the messages, so an outage does not burn through the queue's delivery limit.
 *
 * Each message gets a CONSUMER span, child of its publisher's (the message's traceparent).
 * In batch mode the messages in hand are handed over together, each with its own span.
 */
export class Consumer {
  private channel: Channel | null = null;
  private tag: string | null = null;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private pending: Held[] = [];
  private timer: NodeJS.Timeout | null = null;

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
      if (msg) this.receive(channel, msg);
    });
    this.tag = consumerTag;
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private receive(channel: Channel, msg: ConsumeMessage): void {
    const { logger, queue } = this.options;
    const name = (msg.properties.type ?? msg.fields.routingKey) as MessageName;
    const expected =
      "batch" in this.options ? name === this.options.batch.name : this.options.handlers[name] !== undefined;
    const parsed = expected
      ? parseMessage(name, msg.content)
      : { ok: false as const, error: `no handler for '${name}' on ${queue}` };
    if (!parsed.ok) {
      logger.error({ queue, name, reason: parsed.error }, "dead-lettering a message that cannot be handled");
      channel.nack(msg, false, false);
      return;
    }
    const span = tracer().startSpan(
      `process ${name}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          "messaging.system": "rabbitmq",
          "messaging.operation.type": "process",
          "messaging.destination.name": queue,
        },
      },
      contextFrom(msg.properties.headers),
    );
    const held: Held = {
      channel,
      msg,
      received: {
        name,
        body: parsed.value,
        headers: (msg.properties.headers ?? {}) as Record<string, unknown>,
        redelivered: msg.fields.redelivered,
        context: trace.setSpan(otelContext.active(), span),
      },
      end(error) {
        if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        span.end();
      },
    };
    if (!("batch" in this.options)) {
      const handler = this.options.handlers[name] as (m: Received<MessageName>) => Promise<void>;
      this.track(
        this.settle([held], () => otelContext.with(held.received.context, () => handler(held.received))),
      );
      return;
    }
    this.pending.push(held);
    if (this.pending.length >= this.options.batch.maxSize) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.batch.maxWaitMs);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length || !("batch" in this.options)) return;
    const { handler } = this.options.batch;
    this.track(this.settle(batch, () => handler(batch.map((h) => h.received))));
  }

  /**
   * Runs the work until it succeeds (then acks), is refused (dead-letters), or every channel
   * its messages came on is gone (then the broker redelivers them to whoever consumes next).
   * A message is acked or nacked only on its own channel, and only while that is open.
   */
  private async settle(held: Held[], work: () => Promise<void>): Promise<void> {
    const { logger, queue } = this.options;
    const live = (h: Held) => h.channel === this.channel;
    for (let attempt = 0; ; attempt++) {
      try {
        await work();
        for (const h of held) if (live(h)) h.channel.ack(h.msg);
        for (const h of held) h.end();
        return;
      } catch (err) {
        if (err instanceof PermanentError) {
          logger.error(
            { queue, messages: held.length, err: err.message },
            "dead-lettering messages their handler refused",
          );
          for (const h of held) if (live(h)) h.channel.nack(h.msg, false, false);
          for (const h of held) h.end(err);
          return;
        }
        if (!held.some(live)) {
          for (const h of held) h.end(err as Error);
          return;
        }
        const waitMs = Math.min(200 * 2 ** attempt, 10_000);
        logger.warn(
          { queue, messages: held.length, err: (err as Error).message, retryInMs: waitMs },
          "handler failed; retrying",
        );
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }

  /** Stops taking messages and waits for the ones in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    const channel = this.channel;
    if (channel && this.tag) await channel.cancel(this.tag).catch(() => {});
    this.flush();
    await Promise.all([...this.inFlight]);
    if (channel) await channel.close().catch(() => {});
    this.channel = null;
  }
}
