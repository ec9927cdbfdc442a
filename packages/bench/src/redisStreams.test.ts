import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteStreams, REDIS_URL, readStreams } from "./redisStreams.ts";

/** Against the local Redis: each test its own `t_bench_*` streams, deleted after. */
let admin: Redis;
beforeAll(() => {
  admin = new Redis(REDIS_URL, { lazyConnect: true });
  return admin.connect();
});
afterAll(() => admin.disconnect());

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await sleep(10);
}

describe("readStreams", () => {
  it("reports each entry's webhook-id and stream, those added before it started too", async () => {
    const streams = [`t_bench_${randomUUID()}`, `t_bench_${randomUUID()}`];
    const seen: string[] = [];
    try {
      await admin.xadd(streams[0]!, "*", "webhook-id", "evt_early", "body", "{}");
      const stop = await readStreams(REDIS_URL, streams, (id, stream) => seen.push(`${id} ${stream}`));
      // A value that reads "webhook-id" is not a field name; an entry without the field counts nothing.
      await admin.xadd(streams[1]!, "*", "x-note", "webhook-id", "webhook-id", "evt_a", "body", "{}");
      await admin.xadd(streams[0]!, "*", "body", "{}");
      await admin.xadd(streams[0]!, "*", "webhook-id", "evt_b", "body", "{}");
      await until(() => seen.length >= 3);
      await stop();
      expect(seen.sort()).toEqual([`evt_a ${streams[1]}`, `evt_b ${streams[0]}`, `evt_early ${streams[0]}`]);
    } finally {
      await deleteStreams(REDIS_URL, streams);
    }
    expect(await admin.exists(...streams)).toBe(0);
  });

  it("fails at once, naming the server, when nothing listens there", async () => {
    await expect(readStreams("redis://127.0.0.1:1/0", ["s"], () => {})).rejects.toThrow(
      /Redis at redis:\/\/127\.0\.0\.1:1\/0/,
    );
  });
});
