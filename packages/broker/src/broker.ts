import { randomUUID } from "node:crypto";
import type { Writable } from "node:stream";
import type { MessageName, MessageTypes } from "@herald/contracts";
import { type Context, inSpan, type Logger, OutageLog, SpanKind, traceHeaders } from "@herald/runtime";
import type { Attributes, Link } from "@opentelemetry/api";
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
} from "amqplib";
import { coalesceWrites } from "./coalesce.ts";
import {
  type BatchSpec,
  Consumer,
  type ConsumerOptions,
  type DeadReason,
  defaultPolicy,
  type HandlersFor,
} from "./consumer.ts";
import {
  BrokerUnavailableError,
  type HandlerOutage,
  isTransientBrokerError,
  outageOfHandlers,
} from "./errors.ts";
import {
  declareTopology,
  type MessagesOf,
  type QueueRole,
  type Topology,
  topologyNames,
} from "./topology.ts";

export type PublishOptions = {
  messageId?: string;
  headers?: Record<string, string>;
  /** The trace the publish belongs to (default: the active one). */
  context?: Context;
  links?: Link[];
  attributes?: Attributes;
};

/**
 * A message body its publisher serialized itself: many messages that share a large part (the
 * attempts of one event share its payload) are built from one serialization of it, not one each.
 */
export class Serialized<K extends MessageName> {
  constructor(
    readonly name: K,
    readonly content: Buffer,
  ) {}
}

export type BrokerOptions = {
  url: string;
  prefix: string;
  logger: Logger;
  /** Called after every (re)connection, once the topology is declared. */
  onConnected?: () => void;
  /** Retry delays to declare delay queues for (the dispatcher's schedule). */
  delaysMs?: readonly number[];
  /**
   * Which handler errors are worth retrying in place (the database away, a deadlock), beside
   * the broker's own; every other error counts towards dead-lettering the message.
   */
  isTransient?: (err: unknown) => boolean;
  /**
   * Where a handler's failure that a dependency's absence explains (the database down) is
   * logged, as one outage, instead of a line per retry.
   */
  outage?: HandlerOutage;
};

type EachHandlers = Extract<ConsumerOptions["handle"], { kind: "each" }>["handlers"];

/**
 * One connection with one confirm channel, reconnected with capped backoff (100 ms doubling
 * to 5 s) whenever it drops. The topology is declared on every connection, so a broker that
 * lost its definitions gets them back. Publishing resolves only once the broker confirms.
 */
export class Broker {
  readonly topology: Topology;
  private model: ChannelModel | null = null;
  private channel: ConfirmChannel | null = null;
  private closing = false;
  private connecting: Promise<void> | null = null;
  private backoffMs = 100;
  private readonly waiters = new Set<() => void>();
  private readonly consumers: Consumer[] = [];
  private readonly deadListeners: ((queue: string, reason: DeadReason) => void)[] = [];
  /** The broker's own outages: a connection lost or refused, until one is made again. */
  private readonly outageLog: OutageLog;
  private everConnected = false;

  constructor(private readonly options: BrokerOptions) {
    this.topology = topologyNames(options.prefix);
    this.outageLog = new OutageLog(options.logger, "broker");
    this.handlerOutage = outageOfHandlers(() => this.connected, this.outageLog, options.outage);
  }

  /** A handler's failure that an outage explains (errors.ts): the broker's own, or `outage`'s. */
  private readonly handlerOutage: HandlerOutage;

  /** Whether a handler's error is worth retrying in place: the broker's own, or the `isTransient` given. */
  isTransient(err: unknown): boolean {
    return isTransientBrokerError(err) || (this.options.isTransient?.(err) ?? false);
  }

  get connected(): boolean {
    return this.channel !== null;
  }

  /** Starts connecting in the background; resolves once connected or after `waitMs`. */
  async start(waitMs = 5000): Promise<boolean> {
    this.connectLoop();
    return this.waitForConnection(waitMs);
  }

  waitForConnection(waitMs: number): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(this.connected);
      };
      const timer = setTimeout(done, waitMs);
      this.waiters.add(done);
    });
  }

  private connectLoop(): void {
    if (this.connecting || this.closing) return;
    this.connecting = (async () => {
      while (!this.closing && !this.channel) {
        try {
          await this.connect();
          this.backoffMs = 100;
        } catch (err) {
          this.outageLog.failed(err);
          await new Promise((r) => setTimeout(r, this.backoffMs));
          this.backoffMs = Math.min(this.backoffMs * 2, 5000);
        }
      }
    })().finally(() => {
      this.connecting = null;
    });
  }

  private async connect(): Promise<void> {
    const model = await amqp.connect(this.options.url, {
      clientProperties: { connection_name: this.options.prefix },
      // Frames are already gathered per tick (coalesceWrites): Nagle's algorithm would only hold
      // a lone publish or ack back until the broker's delayed ACK, 40 ms on Linux.
      noDelay: true,
    });
    coalesceWrites((model.connection as unknown as { stream: Writable }).stream);
    try {
      const channel = await model.createConfirmChannel();
      await declareTopology(channel, this.topology, this.options.delaysMs);
      for (const consumer of this.consumers) await consumer.attach(model);
      const lost = (err?: Error) => {
        if (this.model !== model) return;
        this.model = null;
        this.channel = null;
        if (!this.closing) {
          this.outageLog.failed(err ?? new Error("connection closed"));
          this.connectLoop();
        }
      };
      model.on("close", lost);
      model.on("error", lost);
      channel.on("error", () => {});
      channel.on("close", () => {
        if (this.model === model) void model.close().catch(() => {});
      });
      this.model = model;
      this.channel = channel;
    } catch (err) {
      await model.close().catch(() => {});
      throw err;
    }
    if (!this.everConnected) this.options.logger.info({ prefix: this.options.prefix }, "broker connected");
    this.everConnected = true;
    this.outageLog.ok();
    for (const wake of [...this.waiters]) wake();
    this.options.onConnected?.();
  }

  /** Publishes a persistent message and resolves when the broker has confirmed it. */
  publish<K extends MessageName>(
    name: K,
    payload: MessageTypes[K],
    options: PublishOptions = {},
  ): Promise<void> {
    return this.traced(this.topology.exchange, name, name, payload, options);
  }

  /** Every publish is a PRODUCER span; its context travels in the message's W3C headers. */
  private traced<K extends MessageName>(
    exchange: string,
    routingKey: string,
    name: K,
    payload: MessageTypes[K] | Serialized<K>,
    options: PublishOptions,
  ): Promise<void> {
    const attributes: Attributes = {
      "messaging.system": "rabbitmq",
      "messaging.operation.type": "send",
      "messaging.destination.name": exchange || routingKey,
      "messaging.rabbitmq.destination.routing_key": routingKey,
      ...options.attributes,
    };
    return inSpan(
      `publish ${name}`,
      { kind: SpanKind.PRODUCER, parent: options.context, links: options.links, attributes },
      () =>
        this.send(exchange, routingKey, name, payload, {
          ...options,
          headers: { ...options.headers, ...traceHeaders() },
        }),
    );
  }

  private send<K extends MessageName>(
    exchange: string,
    routingKey: string,
    name: K,
    payload: MessageTypes[K] | Serialized<K>,
    options: PublishOptions,
  ): Promise<void> {
    const content = payload instanceof Serialized ? payload.content : Buffer.from(JSON.stringify(payload));
    return this.confirmed(exchange, routingKey, content, {
      persistent: true,
      contentType: "application/json",
      type: name,
      messageId: options.messageId ?? randomUUID(),
      timestamp: Math.floor(Date.now() / 1000),
      headers: options.headers ?? {},
    });
  }

  /** One publish on the confirm channel; resolves once the broker confirms it. */
  private confirmed(
    exchange: string,
    routingKey: string,
    content: Buffer,
    properties: Options.Publish,
  ): Promise<void> {
    const channel = this.channel;
    if (!channel) return Promise.reject(new BrokerUnavailableError());
    return new Promise((resolve, reject) => {
      try {
        channel.publish(exchange, routingKey, content, properties, (err) =>
          err
            ? reject(new BrokerUnavailableError(`publish not confirmed: ${err.message ?? err}`))
            : resolve(),
        );
      } catch (err) {
        reject(new BrokerUnavailableError((err as Error).message));
      }
    });
  }

  /** Publishes straight to one queue (a delay queue), confirmed like any other publish. */
  publishToQueue<K extends MessageName>(
    queue: string,
    name: K,
    payload: MessageTypes[K] | Serialized<K>,
    options: PublishOptions = {},
  ): Promise<void> {
    return this.traced("", queue, name, payload, options);
  }

  /**
   * Consumes a queue with one handler per message bound to it, from now on and after every
   * reconnection. Handlers must be idempotent: a message is redelivered when a process or the
   * broker dies before the ack.
   */
  consume<Q extends QueueRole>(role: Q, handlers: HandlersFor<Q>, prefetch: number): Promise<Consumer> {
    return this.addConsumer(role, prefetch, { kind: "each", handlers: handlers as EachHandlers });
  }

  /**
   * Consumes a queue in batches (see BatchSpec), the messages bound to it mixed in a batch and
   * told apart by their `name`; same guarantees.
   */
  consumeBatch<Q extends QueueRole>(
    role: Q,
    batch: BatchSpec<MessagesOf<Q>>,
    prefetch: number,
  ): Promise<Consumer> {
    return this.addConsumer(role, prefetch, {
      kind: "batch",
      batch: batch as unknown as BatchSpec<MessageName>,
    });
  }

  private async addConsumer(
    role: QueueRole,
    prefetch: number,
    handle: ConsumerOptions["handle"],
  ): Promise<Consumer> {
    const { logger } = this.options;
    const consumer = new Consumer({
      outage: this.handlerOutage,
      queue: this.topology.queues[role],
      prefetch,
      logger,
      handle,
      policy: defaultPolicy((err) => this.isTransient(err)),
      deadLetter: (msg, headers) => this.copyToDead(msg, headers),
      onDeadLettered: (queue, reason) => {
        for (const listen of this.deadListeners) listen(queue, reason);
      },
    });
    this.consumers.push(consumer);
    const model = this.model;
    if (!model) return consumer;
    try {
      await consumer.attach(model);
    } catch (err) {
      // The connection dropped while attaching (RabbitMQ restarting, a 541): registered, the
      // consumer is attached with the rest on reconnect, so a service's start goes on.
      if (this.model === model) throw err;
      logger.warn(
        { err: (err as Error).message, queue: this.topology.queues[role] },
        "consumer attaches on reconnect",
      );
    }
    return consumer;
  }

  /**
   * A plain channel of its own on the current connection, for the listen relay (relay.ts);
   * closed with the connection. Throws BrokerUnavailableError when not connected.
   */
  async openChannel(): Promise<Channel> {
    if (!this.model) throw new BrokerUnavailableError();
    const channel = await this.model.createChannel();
    channel.on("error", () => {});
    return channel;
  }

  /** Called for each message a consumer of this broker moves to `<prefix>.dead`. */
  onDeadLettered(listen: (queue: string, reason: DeadReason) => void): void {
    this.deadListeners.push(listen);
  }

  /** A copy of a consumed message, headers added, to the dead exchange; resolves once confirmed. */
  private copyToDead(msg: ConsumeMessage, headers: Record<string, string | number>): Promise<void> {
    return this.confirmed(this.topology.deadExchange, msg.fields.routingKey, msg.content, {
      ...msg.properties,
      headers: { ...msg.properties.headers, ...headers },
    });
  }

  /** Stops every consumer and waits for the messages in hand; publishing still works. */
  async stopConsuming(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.stop()));
  }

  /** Messages ready in a queue and its consumers, for the consumer-lag gauge; null when unknown. */
  async queueDepth(queue: string): Promise<{ messages: number; consumers: number } | null> {
    const channel = this.channel;
    if (!channel) return null;
    try {
      const { messageCount, consumerCount } = await channel.checkQueue(queue);
      return { messages: messageCount, consumers: consumerCount };
    } catch {
      return null;
    }
  }

  /** A round trip to the broker, for readiness checks. */
  async ping(): Promise<boolean> {
    const channel = this.channel;
    if (!channel) return false;
    try {
      await channel.checkExchange(this.topology.exchange);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.stopConsuming();
    this.closing = true;
    const model = this.model;
    this.model = null;
    this.channel = null;
    for (const wake of [...this.waiters]) wake();
    if (model) await model.close().catch(() => {});
  }
}
