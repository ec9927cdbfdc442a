import { setTimeout as sleep } from "node:timers/promises";
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
import type { BrokerOptions } from "./broker.ts";
import { defaultBackoffMs, type SettlePolicy, settle } from "./settle.ts";
import type { MessagesOf, QueueRole } from "./topology.ts";

export type Received<K extends MessageName> = {
  name: K;
  body: MessageTypes[K];
  headers: Record<string, unknown>;
  redelivered: boolean;
  /** The context of this message's CONSUMER span: publish under it to stay in its trace. */
  context: Context;
};

/** A message of any of the names `K`, told apart by its `name`. */
export type ReceivedOf<K extends MessageName> = K extends MessageName ? Received<K> : never;

/** One handler for each message bound to queue `Q`: none may be missing, none extra. */
export type HandlersFor<Q extends QueueRole> = {
  [K in MessagesOf<Q>]: (message: Received<K>) => Promise<void>;
};

/**
 * Handles many messages of one kind at once: one round of SQL for a whole batch. A batch goes
 * when it is full, or `maxWaitMs` after its first message came if fewer than `maxRunning`
 * batches are being handled; otherwise it fills until one of them is done, or until it has
 * waited `maxHoldMs` more. So with no wait a lone message goes at once, under load batches
 * grow by themselves to what the handler keeps up with, and batches that keep retrying (the
 * database down, a message refused and retried alone) hold the next one back no longer than
 * `maxHoldMs`: other accounts' messages in it are not theirs to wait on. Full batches go at
 * once, so `maxRunning` shapes batches rather than caps them.
 */
export type BatchSpec<K extends MessageName> = {
  handler: (messages: ReceivedOf<K>[]) => Promise<void>;
  maxSize: number;
  maxWaitMs: number;
  maxRunning: number;
  maxHoldMs: number;
};

/** Why a message went to `<prefix>.dead`, in its `x-herald-reason` header and the metric's label. */
export type DeadReason = "unparseable" | "handler_failed";

/** Publishes a copy of the message to `<prefix>.dead` with these headers added (confirmed). */
export type DeadLetterSink = (msg: ConsumeMessage, headers: Record<string, string | number>) => Promise<void>;

export type ConsumerOptions = {
  queue: string;
  prefetch: number;
  logger: Logger;
  policy: SettlePolicy;
  deadLetter: DeadLetterSink;
  onDeadLettered: (queue: string, reason: DeadReason) => void;
  /** Failures a dependency's outage explains, logged there once instead of per retry. */
  outage?: BrokerOptions["outage"];
  /** A handler per message name, or one batch handler for the queue's messages. */
  handle:
    | { kind: "each"; handlers: Partial<Record<MessageName, (m: Received<MessageName>) => Promise<void>>> }
    | { kind: "batch"; batch: BatchSpec<MessageName> };
};

/** A message in hand, with the channel it came on: only that channel can ack it. */
type Held = {
  channel: Channel;
  msg: ConsumeMessage;
  received: Received<MessageName>;
  end: (error?: Error) => void;
};

/** The longest error text a dead-lettered message carries in its headers. */
const ERROR_HEADER_LIMIT = 1000;
/** Waits before consuming again on a new channel: 1 s doubling to 30 s. */
const REATTACH_MIN_MS = 1000;
const REATTACH_MAX_MS = 30_000;

/**
 * One consumer on its own channel, re-attached on every connection. A message is acked only
 * after its handler finished (the work is durable); what happens on failure is decided in
 * settle.ts. A message that does not parse is dead-lettered at once.
 *
 * Each message gets a CONSUMER span, child of its publisher's (the message's traceparent).
 * In batch mode the messages in hand are handed over together, each with its own span.
 */
export class Consumer {
  private channel: Channel | null = null;
  private tag: string | null = null;
  private stopped = false;
  /** The connection consumed on, while it is open. */
  private model: ChannelModel | null = null;
  private reattachMs = REATTACH_MIN_MS;
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private pending: Held[] = [];
  /** The pending batch's wait; `holding` once it is due and waits for a running batch. */
  private timer: { cancel: () => void; holding: boolean } | null = null;
  /** Batches being handled. */
  private running = 0;

  constructor(private readonly options: ConsumerOptions) {}

  async attach(model: ChannelModel): Promise<void> {
    if (this.stopped) return;
    if (this.model !== model) {
      this.model = model;
      model.once("close", () => {
        if (this.model === model) this.model = null;
      });
    }
    const channel = await model.createChannel();
    channel.on("error", () => {});
    channel.on("close", () => {
      if (this.channel !== channel) return;
      this.channel = null;
      this.reattach(model);
    });
    await channel.prefetch(this.options.prefetch);
    this.channel = channel;
    const { consumerTag } = await channel.consume(this.options.queue, (msg) => {
      if (msg) this.receive(channel, msg);
    });
    this.tag = consumerTag;
    this.reattachMs = REATTACH_MIN_MS;
  }

  /**
   * RabbitMQ closed this consumer's channel while the connection stays up (a message held past
   * its consumer timeout, a channel error): consume again on a new channel, with backoff. When
   * the connection itself went, the broker re-attaches every consumer once it reconnects.
   */
  private reattach(model: ChannelModel): void {
    const delay = this.reattachMs;
    this.reattachMs = Math.min(this.reattachMs * 2, REATTACH_MAX_MS);
    const timer = setTimeout(() => {
      if (this.stopped || this.channel || this.model !== model) return;
      this.options.logger.warn({ queue: this.options.queue }, "consumer channel closed; consuming again");
      this.attach(model).catch(() => this.reattach(model));
    }, delay);
    timer.unref();
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private receive(channel: Channel, msg: ConsumeMessage): void {
    const { queue, handle } = this.options;
    const name = (msg.properties.type ?? msg.fields.routingKey) as MessageName;
    const expected = handle.kind === "batch" || handle.handlers[name] !== undefined;
    const parsed = expected
      ? parseMessage(name, msg.content)
      : { ok: false as const, error: `no handler for '${name}' on ${queue}` };
    if (!parsed.ok) {
      this.track(this.deadLetter(channel, msg, "unparseable", parsed.error, 1));
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
        if (!span.isRecording()) return;
        if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        span.end();
      },
    };
    if (handle.kind === "each") {
      const handler = handle.handlers[name]!;
      this.track(
        this.settle([held], () => otelContext.with(held.received.context, () => handler(held.received))),
      );
      return;
    }
    this.pending.push(held);
    if (this.pending.length >= handle.batch.maxSize) this.flush();
    else if (!this.timer) {
      const { maxWaitMs } = handle.batch;
      // An immediate, not a 0 ms timer: messages read from the same socket chunk go together.
      if (maxWaitMs > 0) {
        const t = setTimeout(() => this.due(), maxWaitMs);
        this.timer = { cancel: () => clearTimeout(t), holding: false };
      } else {
        const t = setImmediate(() => this.due());
        this.timer = { cancel: () => clearImmediate(t), holding: false };
      }
    }
  }

  /** The batch's wait is over: it goes if there is room, else when a running one is done or after `maxHoldMs`. */
  private due(): void {
    this.timer = null;
    const { handle } = this.options;
    if (handle.kind !== "batch") return;
    if (this.running < handle.batch.maxRunning) {
      this.flush();
      return;
    }
    const t = setTimeout(() => this.flush(), handle.batch.maxHoldMs);
    this.timer = { cancel: () => clearTimeout(t), holding: true };
  }

  private flush(): void {
    this.timer?.cancel();
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    const { handle } = this.options;
    if (!batch.length || handle.kind !== "batch") return;
    this.running++;
    const work = this.settle(batch, (held) =>
      handle.batch.handler(held.map((h) => h.received) as ReceivedOf<MessageName>[]),
    );
    this.track(
      work.finally(() => {
        this.running--;
        // What filled meanwhile and is past its wait goes now.
        if (this.pending.length && (!this.timer || this.timer.holding) && !this.stopped) this.flush();
      }),
    );
  }

  /** Runs the work to an outcome (settle.ts); acks and nacks only on a message's own channel. */
  private async settle(held: Held[], work: (held: Held[]) => Promise<void>): Promise<void> {
    const { logger, queue, policy } = this.options;
    const live = (h: Held) => h.channel === this.channel;
    await settle(
      held,
      work,
      {
        live,
        ack: (done) => {
          for (const h of done) {
            if (live(h)) h.channel.ack(h.msg);
            h.end();
          }
        },
        deadLetter: async (h, error, failures) => {
          h.end(error);
          await this.deadLetter(h.channel, h.msg, "handler_failed", error, failures);
        },
        stopping: () => this.stopped,
        // A wait between tries ends early when the consumer stops.
        wait: (ms) => sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => {}),
        onRetry: ({ items, error, transient, waitMs }) => {
          const { outage } = this.options;
          if (transient && outage?.is(error)) return outage.failed(error);
          logger.warn(
            { queue, messages: items, err: error.message, transient, retryInMs: waitMs },
            transient ? "handler failed; retrying" : "handler refused a message; retrying it alone",
          );
        },
      },
      policy,
    );
    // Messages whose channel closed meanwhile are redelivered by the broker; their spans end here.
    for (const h of held) if (!live(h)) h.end();
  }

  /**
   * Moves a message to `<prefix>.dead`: a copy with the reason in its headers, confirmed, then
   * the original acked. Should the copy fail, the original is rejected, and the queue's own
   * dead-letter exchange moves it there without the reason.
   */
  private async deadLetter(
    channel: Channel,
    msg: ConsumeMessage,
    reason: DeadReason,
    error: Error | string,
    failures: number,
  ): Promise<void> {
    const { logger, queue } = this.options;
    const text = (typeof error === "string" ? error : error.message).slice(0, ERROR_HEADER_LIMIT);
    const code = typeof error === "string" ? undefined : (error as { code?: unknown }).code;
    logger.error(
      { queue, name: msg.properties.type, messageId: msg.properties.messageId, reason, failures, err: text },
      "dead-lettering a message",
    );
    this.options.onDeadLettered(queue, reason);
    const headers: Record<string, string | number> = {
      "x-herald-reason": reason,
      "x-herald-error": text,
      "x-herald-queue": queue,
      "x-herald-failures": failures,
      "x-herald-dead-at": new Date().toISOString(),
      ...(typeof code === "string" ? { "x-herald-error-code": code } : {}),
    };
    const copied = await this.options.deadLetter(msg, headers).then(
      () => true,
      () => false,
    );
    if (channel !== this.channel) return;
    if (copied) channel.ack(msg);
    else channel.nack(msg, false, false);
  }

  /** Stops taking messages and waits for the ones in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    const channel = this.channel;
    if (channel && this.tag) await channel.cancel(this.tag).catch(() => {});
    this.flush();
    await Promise.all([...this.inFlight]);
    if (channel) await channel.close().catch(() => {});
    this.channel = null;
  }
}

export const defaultPolicy = (isTransient: (err: unknown) => boolean): SettlePolicy => ({
  isTransient,
  maxFailures: 5,
  backoffMs: defaultBackoffMs,
});
