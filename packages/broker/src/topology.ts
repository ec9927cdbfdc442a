import type { MessageName } from "@herald/contracts";
import type { Channel } from "amqplib";

/**
 * The whole RabbitMQ topology, declared in this one module. Every name starts with a prefix
 * (`AMQP_PREFIX`, default `herald`) so tests and several installations can share a broker.
 *
 * - `<p>.messages`: a direct exchange; a message's routing key is its catalog name.
 * - one quorum queue per consumer role, bound to the names that role handles (the senders'
 *   two lanes excepted: see LANES). A message of a new form gets a queue of its own (the
 *   batches), so that only the dispatchers that know it consume it: during a rolling upgrade,
 *   older ones never see it, and it waits for the newer ones;
 * - `<p>.dead`: where a message goes when it does not parse, when its handler failed on it
 *   alone 5 times (see settle.ts), or after `DELIVERY_LIMIT` redeliveries: a poison message
 *   must not hold its queue. The consumer's copies carry the reason in `x-herald-*` headers.
 * - `<p>.delay.<ms>ms`: one queue per distinct retry delay, with that fixed TTL. Nothing
 *   consumes them: a message waits out the TTL, then is dead-lettered back to the exchange
 *   as `retry.due.v1`. (A per-message TTL in one shared queue would only expire at the
 *   head, so a 10 h retry would hold back a 5 s one behind it.)
 */
export type Topology = ReturnType<typeof topologyNames>;

/** 20 redeliveries: enough to ride out restarts, few enough that a poison message parks fast. */
const DELIVERY_LIMIT = 20;

/**
 * Every queue a service consumes, with the messages bound to it: the one declaration both the
 * bindings below and each consumer's handler map are typed from (`HandlersFor`), so a message
 * bound to a queue without a handler there does not compile.
 */
export const queueMessages = {
  dispatcherEvents: ["event.created.v1"],
  dispatcherEventBatches: ["events.created.v1"],
  dispatcherControl: ["endpoint.deleted.v1", "event.erased.v1", "replay.requested.v1", "app.deleted.v1"],
  dispatcherResults: ["attempt.completed.v1"],
  dispatcherResultBatches: ["attempts.completed.v1"],
  dispatcherRetries: ["retry.due.v1"],
  senderAttempts: ["attempt.requested.v1"],
  senderBacklog: ["attempt.requested.v1"],
  senderLarge: ["attempt.requested.v1"],
} as const satisfies Record<string, readonly MessageName[]>;

/**
 * The senders' lanes: `attempt.requested.v1` goes to one of them by the dispatcher's choice
 * (`publishToQueue`), never by binding: first attempts of new events to `senderAttempts`,
 * retries and replays to `senderBacklog`, each with its own capacity in every sender, so live
 * traffic never queues behind a backlog; and any attempt whose message is over
 * LARGE_MESSAGE_BYTES to `senderLarge`, whose few slots bound the large messages a sender holds.
 */
export const LANES: readonly QueueRole[] = ["senderAttempts", "senderBacklog", "senderLarge"];

export type QueueRole = keyof typeof queueMessages;
/** The messages bound to a queue. */
export type MessagesOf<Q extends QueueRole> = (typeof queueMessages)[Q][number];

export function topologyNames(prefix: string) {
  return {
    exchange: `${prefix}.messages`,
    deadExchange: `${prefix}.dead`,
    deadQueue: `${prefix}.dead`,
    queues: {
      dispatcherEvents: `${prefix}.dispatcher.events`,
      dispatcherEventBatches: `${prefix}.dispatcher.event-batches`,
      dispatcherControl: `${prefix}.dispatcher.control`,
      dispatcherResults: `${prefix}.dispatcher.results`,
      dispatcherResultBatches: `${prefix}.dispatcher.result-batches`,
      dispatcherRetries: `${prefix}.dispatcher.retries`,
      senderAttempts: `${prefix}.sender.attempts`,
      senderBacklog: `${prefix}.sender.backlog`,
      senderLarge: `${prefix}.sender.large`,
    } satisfies Record<QueueRole, string>,
    delayQueue: (ms: number) => `${prefix}.delay.${ms}ms`,
    /** The listen relay's exchange (relay.ts): a request's routing key is its endpoint's id. */
    listenExchange: `${prefix}.listen`,
  };
}

/** Declares everything; `delaysMs` are the retry delays the dispatcher schedules with. */
export async function declareTopology(
  channel: Channel,
  topology: Topology,
  delaysMs: readonly number[] = [],
): Promise<void> {
  await channel.assertExchange(topology.exchange, "direct", { durable: true });
  await channel.assertExchange(topology.deadExchange, "fanout", { durable: true });
  await channel.assertQueue(topology.deadQueue, { durable: true, arguments: { "x-queue-type": "quorum" } });
  await channel.bindQueue(topology.deadQueue, topology.deadExchange, "");
  for (const [role, names] of Object.entries(queueMessages) as [QueueRole, readonly MessageName[]][]) {
    const queue = topology.queues[role];
    await channel.assertQueue(queue, {
      durable: true,
      arguments: {
        "x-queue-type": "quorum",
        "x-delivery-limit": DELIVERY_LIMIT,
        "x-dead-letter-exchange": topology.deadExchange,
      },
    });
    if (LANES.includes(role)) continue;
    for (const name of names) await channel.bindQueue(queue, topology.exchange, name);
  }
  for (const ms of new Set(delaysMs)) {
    await channel.assertQueue(topology.delayQueue(ms), {
      durable: true,
      arguments: {
        "x-queue-type": "quorum",
        "x-message-ttl": ms,
        "x-dead-letter-exchange": topology.exchange,
        "x-dead-letter-routing-key": "retry.due.v1" satisfies MessageName,
        // At-least-once dead-lettering: a due retry is not dropped if the move fails midway.
        "x-dead-letter-strategy": "at-least-once",
        "x-overflow": "reject-publish",
      },
    });
  }
}
