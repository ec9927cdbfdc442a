import { Broker } from "@herald/broker";
import { createLogger } from "@herald/runtime";
import { afterEach, expect } from "vitest";
import { AMQP_URL } from "./env.ts";
import { createQueuePrefix } from "./isolation.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

/** A started broker on a queue prefix of its own, closed and its queues deleted after the test. */
export async function testBroker(name: string): Promise<Broker> {
  const queues = createQueuePrefix();
  const b = new Broker({
    url: AMQP_URL,
    prefix: queues.prefix,
    logger: createLogger(name, process.env.TEST_LOG_LEVEL ?? "silent"),
  });
  expect(await b.start(5000)).toBe(true);
  cleanups.push(async () => {
    await b.close();
    await queues.remove();
  });
  return b;
}
