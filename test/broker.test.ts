import { BrokerUnavailableError, type Consumer, type ReceivedOf } from "@herald/broker";
import type { Message } from "amqplib";
import { describe, expect, it } from "vitest";
import { testBroker } from "./support/broker.ts";
import { channelOf, nextDeliveries } from "./support/consumers.ts";

/**
 * The consumer against a real RabbitMQ: it consumes again when the broker closes its channel
 * under a live connection, it stops without waiting out a handler that keeps failing, and in
 * batches a lone message goes at once while a busy consumer's next batch fills.
 */
const broker = () => testBroker("broker-test");

/** The tests publish the single form only. */
const eventIdOf = (m: ReceivedOf<"event.created.v1" | "events.created.v1">) =>
  m.name === "event.created.v1" ? m.body.event_id : "";
const due = (n: number) => ({ attempt_id: `atmpt_${n}`, delivery_id: `dlv_${n}` });
const created = (n: number) => ({
  event_id: `evt_${n}`,
  account_id: "acct_1",
  app_id: "app_1",
  type: "invoice.paid",
  created_at: new Date().toISOString(),
});

describe("a batch consumer", () => {
  it("hands a lone message over at once, and fills the next batch while the handler is busy", async () => {
    const b = await broker();
    const batches: string[][] = [];
    let release = () => {};
    let busy = Promise.resolve();
    const consumer = await b.consumeBatch(
      "dispatcherEvents",
      {
        handler: async (messages) => {
          batches.push(messages.map(eventIdOf));
          await busy;
        },
        maxSize: 100,
        maxWaitMs: 0,
        maxRunning: 1,
        maxHoldMs: 60_000,
      },
      200,
    );
    await b.publish("event.created.v1", created(1));
    await expect.poll(() => batches, { timeout: 2000 }).toEqual([["evt_1"]]);

    // The handler is held: what comes meanwhile waits, and goes together once it is done.
    busy = new Promise<void>((resolve) => (release = resolve));
    await b.publish("event.created.v1", created(2));
    await expect.poll(() => batches.length, { timeout: 2000 }).toBe(2);
    const received = nextDeliveries(consumer, 4);
    for (let n = 3; n <= 6; n++) await b.publish("event.created.v1", created(n));
    // The four are in the consumer's hands, and its wait for them (maxWaitMs 0: an immediate,
    // queued at the first of them) is over once an immediate queued after the last has run.
    await received;
    await new Promise((r) => setImmediate(r));
    expect(batches, "nothing more while the only running batch is held").toHaveLength(2);
    release();
    await expect
      .poll(() => batches, { timeout: 2000 })
      .toEqual([["evt_1"], ["evt_2"], ["evt_3", "evt_4", "evt_5", "evt_6"]]);
  });

  it("holds a batch back no longer than maxHoldMs behind one that does not finish", async () => {
    const b = await broker();
    const batches: string[][] = [];
    let release = () => {};
    const stuck = new Promise<void>((resolve) => (release = resolve));
    await b.consumeBatch(
      "dispatcherEvents",
      {
        // The first batch hangs (a database that does not answer, a message retried alone).
        handler: async (messages) => {
          batches.push(messages.map(eventIdOf));
          if (messages.some((m) => eventIdOf(m) === "evt_1")) await stuck;
        },
        maxSize: 100,
        maxWaitMs: 0,
        maxRunning: 1,
        maxHoldMs: 200,
      },
      200,
    );
    await b.publish("event.created.v1", created(1));
    await expect.poll(() => batches.length, { timeout: 2000 }).toBe(1);
    const sent = Date.now();
    await b.publish("event.created.v1", created(2));
    await expect.poll(() => batches, { timeout: 5000 }).toEqual([["evt_1"], ["evt_2"]]);
    expect(Date.now() - sent, "it waited for its hold first").toBeGreaterThanOrEqual(150);
    release();
  });
});

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
    const channel = channelOf(consumer);
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
    // Back in the queue, ready, with no consumer: the stopped consumer let it go (RabbitMQ took it
    // back as its channel closed) and holds nothing. That it never consumes again, even on its
    // re-attach timer, is consumer.test.ts's.
    await expect
      .poll(() => b.queueDepth(b.topology.queues.dispatcherRetries), { timeout: 5000 })
      .toEqual({ messages: 1, consumers: 0 });
    expect(calls).toBe(after);
  });
});
