import { randomBytes } from "node:crypto";
import { topologyNames } from "@herald/broker";
import amqp from "amqplib";
import pg from "pg";
import { AMQP_URL, databaseUrl, PG_URL, RUN_ID, TEMPLATE_DB } from "./env.ts";

/** A database of this test file's own, cloned from the migrated template. */
export async function createTestDatabase(): Promise<{
  url: string;
  name: string;
  drop: () => Promise<void>;
}> {
  const name = `herald_t_${RUN_ID}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`);
        break;
      } catch (err) {
        // 55006: another file is cloning the template at this very moment.
        if ((err as { code?: string }).code !== "55006" || attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A queue prefix of this test's own; `remove` deletes what the topology declared under it. */
export function createQueuePrefix(): { prefix: string; remove: (delaysMs?: number[]) => Promise<void> } {
  const prefix = `t_${randomBytes(5).toString("hex")}`;
  return {
    prefix,
    async remove(delaysMs: number[] = []) {
      const names = topologyNames(prefix);
      const conn = await amqp.connect(AMQP_URL);
      const ch = await conn.createChannel();
      const queues = [...Object.values(names.queues), names.deadQueue, ...delaysMs.map(names.delayQueue)];
      for (const queue of queues) await ch.deleteQueue(queue);
      for (const exchange of [names.exchange, names.deadExchange]) await ch.deleteExchange(exchange);
      await conn.close();
    },
  };
}

/** Reads every message waiting in a queue (acking them), for assertions. */
export type Drained = { name: string; body: unknown; messageId: string; headers: Record<string, unknown> };

export async function drainQueue(queue: string): Promise<Drained[]> {
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const out: Drained[] = [];
  for (;;) {
    const msg = await ch.get(queue, { noAck: true });
    if (!msg) break;
    out.push({
      name: msg.properties.type as string,
      body: JSON.parse(msg.content.toString()),
      messageId: msg.properties.messageId as string,
      headers: (msg.properties.headers ?? {}) as Record<string, unknown>,
    });
  }
  await conn.close();
  return out;
}
