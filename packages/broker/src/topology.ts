import type { MessageName } from "@herald/contracts";
import type { Channel } from "amqplib";

/**
 * The whole RabbitMQ topology, declared in this one module. Every name starts with a prefix
 * (`AMQP_PREFIX`, default `herald`) so tests and several installations can share a broker.
 *
 * - `<p>.messages`: a direct exchange; a message's routing key is its catalog name.
 * - one quorum queue per consumer role, bound to the names that role handles;
 * - `<p>.dead`: where a message goes when it does not parse, or after `deliveryLimit`
 *   redeliveries (a poison message must not loop forever).
 */
export type Topology = ReturnType<typeof topologyNames>;

/** 20 redeliveries: enough to ride out restarts, few enough that a poison message parks fast. */
const DELIVERY_LIMIT = 20;

export function topologyNames(prefix: string) {
  return {
    exchange: `${prefix}.messages`,
    deadExchange: `${prefix}.dead`,
    deadQueue: `${prefix}.dead`,
    queues: {
      dispatcherEvents: `${prefix}.dispatcher.events`,
      dispatcherControl: `${prefix}.dispatcher.control`,
    },
  };
}

export type QueueRole = keyof Topology["queues"];

export const bindings: Record<QueueRole, MessageName[]> = {
  dispatcherEvents: ["event.created.v1"],
  dispatcherControl: ["endpoint.deleted.v1", "replay.requested.v1"],
};

export async function declareTopology(channel: Channel, topology: Topology): Promise<void> {
  await channel.assertExchange(topology.exchange, "direct", { durable: true });
  await channel.assertExchange(topology.deadExchange, "fanout", { durable: true });
  await channel.assertQueue(topology.deadQueue, { durable: true, arguments: { "x-queue-type": "quorum" } });
  await channel.bindQueue(topology.deadQueue, topology.deadExchange, "");
  for (const [role, names] of Object.entries(bindings) as [QueueRole, MessageName[]][]) {
    const queue = topology.queues[role];
    await channel.assertQueue(queue, {
      durable: true,
      arguments: {
        "x-queue-type": "quorum",
        "x-delivery-limit": DELIVERY_LIMIT,
        "x-dead-letter-exchange": topology.deadExchange,
      },
    });
    for (const name of names) await channel.bindQueue(queue, topology.exchange, name);
  }
}
