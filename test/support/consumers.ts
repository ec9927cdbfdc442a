import type { Broker, Consumer } from "@herald/broker";
import type { Channel } from "amqplib";
import { expect } from "vitest";

/**
 * What a service's consumers hold, read from the consumers themselves (the services run in the
 * test's process): RabbitMQ counts unacknowledged messages only in its management plugin, which
 * the broker tests run against need not have, and AMQP's `checkQueue` counts ready ones only.
 * The fields read are consumer.ts's and broker.ts's own; should they be renamed, these throw
 * rather than report an idle consumer.
 */
type ConsumerState = {
  options: { queue: string };
  /** Messages waiting for their batch to go. */
  pending: unknown[];
  /** Messages (or batches) being handled, until acked or dead-lettered. */
  inFlight: Set<unknown>;
  channel: Channel | null;
};

function stateOf(consumer: Consumer): ConsumerState {
  const s = consumer as unknown as Partial<ConsumerState>;
  if (typeof s.options?.queue !== "string" || !Array.isArray(s.pending) || !(s.inFlight instanceof Set))
    throw new Error(
      "Consumer's state is not what test/support/consumers.ts reads: update it with consumer.ts",
    );
  return s as ConsumerState;
}

function consumersOf(broker: Broker): Consumer[] {
  const consumers = (broker as unknown as { consumers?: Consumer[] }).consumers;
  if (!Array.isArray(consumers))
    throw new Error("Broker keeps no `consumers` list: update test/support/consumers.ts with broker.ts");
  return consumers;
}

/** The channel a consumer takes its messages on. */
export const channelOf = (consumer: Consumer): Channel => {
  const { channel } = stateOf(consumer);
  if (!channel)
    throw new Error(`no channel: the consumer of ${stateOf(consumer).options.queue} is not attached`);
  return channel;
};

/**
 * Resolves once `count` more messages have reached the consumer. Its own listener on the channel
 * was registered when the channel was made, so it runs first: each message is in its hands then.
 */
export function nextDeliveries(consumer: Consumer, count: number): Promise<void> {
  const channel = channelOf(consumer);
  return new Promise((resolve) => {
    let seen = 0;
    const listen = () => {
      if (++seen < count) return;
      channel.off("delivery", listen);
      resolve();
    };
    channel.on("delivery", listen);
  });
}

/** Whether any of the brokers' consumers of `queues` holds a message: received, not yet acked. */
export function holdsMessages(brokers: Broker[], queues: string[]): boolean {
  return brokers
    .flatMap(consumersOf)
    .map(stateOf)
    .some((s) => queues.includes(s.options.queue) && (s.pending.length > 0 || s.inFlight.size > 0));
}

/**
 * Waits until the brokers' consumers of `queues` hold no message: each message they had received
 * when this was called has been handled to its end (acked, or dead-lettered). A message known to
 * have been received (its handler's first write is seen) has so been handled completely.
 */
export async function waitUntilHandled(brokers: Broker[], queues: string[], timeout = 20_000): Promise<void> {
  await expect
    .poll(() => holdsMessages(brokers, queues), {
      timeout,
      interval: 20,
      message: `messages held on ${queues}`,
    })
    .toBe(false);
}

/**
 * Waits until nothing is left for the brokers' consumers of `queues`: no message ready in any of
 * them, and none held. A message RabbitMQ has handed over but this process has not read yet is
 * neither, so both must hold at two looks a round trip to the broker apart, by when one that was
 * on its way has been read.
 */
export async function waitUntilQuiet(brokers: Broker[], queues: string[], timeout = 20_000): Promise<void> {
  const quiet = async () => {
    for (const queue of queues) {
      const depth = await brokers[0]!.queueDepth(queue);
      if (!depth || depth.messages > 0) return false;
    }
    return !holdsMessages(brokers, queues);
  };
  await expect
    .poll(async () => (await quiet()) && (await quiet()), {
      timeout,
      interval: 50,
      message: `messages ready or held on ${queues}`,
    })
    .toBe(true);
}
