import { Broker, BrokerUnavailableError, type Consumer } from "@herald/broker";
import { createLogger } from "@herald/runtime";
import type { Channel, Message } from "amqplib";
import { afterEach, describe, expect, it } from "vitest";
import { AMQP_URL } from "./support/env.ts";
import { createQueuePrefix } from "./support/isolation.ts";

/**
 * The consumer against a real RabbitMQ: it consumes again when the broker closes its channel
 * under a live connection, and it stops without waiting out a handler that keeps failing.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

async function broker(): Promise<Broker> {
  const queues = createQueuePrefix();
  const b = new Broker({
    url: AMQP_URL,
    prefix: queues.prefix,
    logger: createLogger("broker-test", process.env.TEST_LOG_LEVEL ?? "silent"),
  });
  expect(await b.start(5000)).toBe(true);
  cleanups.push(async () => {
    await b.close();
    await queues.remove();
  });
  return b;
}

const due = (n: number) => ({ attempt_id: `atmpt_${n}`, delivery_id: `dlv_${n}` });

describe("a consumer", () => {
  it("consumes again when RabbitMQ closes its channel while the connection stays up", async () => {
    const b = await broker();
    const seen: string[] = [];
    const consumer = await b.consume(
      "dispatcherRetries",
      {
        "retry.due.v1": async (m) => {
          seen.push(m.body.attempt_id);
        },
      },
      10,
    );
    await b.publish("retry.due.v1", due(1));
    await expect.poll(() => seen, { timeout: 5000 }).toEqual(["atmpt_1"]);

    // An ack of a delivery tag the channel never gave: RabbitMQ closes the channel (406).
    const channel = (consumer as unknown as { channel: Channel }).channel;
    const closed = new Promise((resolve) => channel.once("close", resolve));
    channel.ack({ fields: { deliveryTag: 999_999 } } as Message);
    await closed;
    expect(b.connected).toBe(true);

    await b.publish("retry.due.v1", due(2));
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(["atmpt_1", "atmpt_2"]);
  });

  it("stops at once while a handler keeps failing, and tries it no more", async () => {
    const b = await broker();
    let calls = 0;
    const consumer: Consumer = await b.consume(
      "dispatcherRetries",
      {
        "retry.due.v1": async () => {
          calls++;
          throw new BrokerUnavailableError("the database is away");
        },
      },
      10,
    );
    await b.publish("retry.due.v1", due(3));
    // Past 200 + 400 + 800 ms of waits: the next wait is 1.6 s, then 3.2 s, doubling to 10 s.
    await expect.poll(() => calls, { timeout: 10_000 }).toBeGreaterThanOrEqual(4);
    await consumer.stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 2000));
    expect(calls).toBe(after);
  });
});
