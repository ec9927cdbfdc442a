import { EventEmitter } from "node:events";
import { createLogger } from "@herald/runtime";
import type { ChannelModel } from "amqplib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Consumer, defaultPolicy } from "./consumer.ts";

/**
 * When a consumer consumes again, on a connection and channels the test closes and clocks it
 * turns: its re-attach waits on timers that a test against RabbitMQ could only wait out.
 * (Against RabbitMQ: test/broker.test.ts.)
 */
/** A connection whose channels the test closes, counting the times a channel was consumed on. */
function fakeConnection() {
  let consumes = 0;
  const channels: EventEmitter[] = [];
  class FakeChannel extends EventEmitter {
    async prefetch(): Promise<void> {}
    async consume(): Promise<{ consumerTag: string }> {
      consumes++;
      return { consumerTag: `tag-${consumes}` };
    }
    async cancel(): Promise<void> {}
    /** As amqplib's: `close` is emitted before the promise resolves. */
    async close(): Promise<void> {
      this.emit("close");
    }
  }
  const connection = Object.assign(new EventEmitter(), {
    async createChannel(): Promise<FakeChannel> {
      const channel = new FakeChannel();
      channels.push(channel);
      return channel;
    },
  }) as unknown as ChannelModel;
  return { connection, channels, consumes: () => consumes };
}

/**
 * Everything a fired timer starts here is promise callbacks (the fakes do no I/O), so all of it
 * has run by the next immediate, which the fake clock leaves real.
 */
const settled = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe("a consumer", () => {
  it("consumes again 1 s after its channel closed under it, and never once stopped", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { connection, channels, consumes } = fakeConnection();
    const consumer = new Consumer({
      queue: "q",
      prefetch: 1,
      logger: createLogger("consumer-test", "silent"),
      policy: defaultPolicy(() => false),
      deadLetter: async () => {},
      onDeadLettered: () => {},
      handle: { kind: "each", handlers: {} },
    });
    await consumer.attach(connection);
    expect(consumes()).toBe(1);

    // RabbitMQ closes its channel, the connection staying up: consumed again after the first wait.
    channels[0]!.emit("close");
    vi.advanceTimersByTime(999);
    await settled();
    expect(consumes()).toBe(1);
    vi.advanceTimersByTime(1);
    await settled();
    expect(consumes()).toBe(2);

    // Stopped: its channel's close schedules a re-attach as any other, which must do nothing,
    // past every wait (1 s doubling to 30 s); nor does the broker's re-attach on reconnecting.
    await consumer.stop();
    vi.advanceTimersByTime(60_000);
    await settled();
    await consumer.attach(connection);
    expect(consumes()).toBe(2);
  });
});
