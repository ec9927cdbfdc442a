import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import amqp from "amqplib";
import pg from "pg";
import { paddedJson } from "./http.ts";
import type { LoadGenerator, OnProgress } from "./loadProcess.ts";
import type { Timing } from "./protocol.ts";
import { perSecond } from "./stats.ts";

/**
 * The raw limits of this machine, measured in the same run as the system: what one delivery is
 * made of (an HTTP request, broker messages, row writes), each alone, with nothing of Herald's
 * in the way. The system's figures are reported as ratios to these.
 */
export type Ceilings = {
  /** 1 KB JSON POSTs, keep-alive, 64 in flight, the load generator's client → a node server here. */
  httpPostsPerSecond: number;
  /** 1 KB persistent messages to a quorum queue with publisher confirms, consumed with acks. */
  rabbitmqMessagesPerSecond: number;
  /** Single-row INSERT transactions (1 KB row) from 16 clients. */
  postgresInsertsPerSecond: number;
};

const KB = 1024;

export async function httpCeiling(
  load: LoadGenerator,
  timing: Timing,
  onProgress: OnProgress,
): Promise<number> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const job = {
      kind: "post",
      url: `http://127.0.0.1:${port}/`,
      concurrency: 64,
      bodyBytes: KB,
      ...timing,
    } as const;
    const { requests } = await load.run(job, onProgress);
    if (requests.errors > 0)
      throw new Error(`HTTP ceiling: ${requests.errors} errors: ${requests.errorSamples[0]}`);
    return perSecond(requests.inWindow, timing.measureMs);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** 500 unconfirmed publishes and 500 unacked deliveries at most: enough to keep the broker busy. */
const AMQP_WINDOW = 500;

export async function rabbitmqCeiling(
  amqpUrl: string,
  timing: Timing,
  onProgress: OnProgress,
): Promise<number> {
  const conn = await amqp.connect(amqpUrl);
  const queue = `bench_ceiling_${randomBytes(5).toString("hex")}`;
  try {
    const pub = await conn.createConfirmChannel();
    const sub = await conn.createChannel();
    await pub.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "quorum" } });
    await sub.prefetch(AMQP_WINDOW);
    const body = Buffer.from(paddedJson(KB));
    return await measure(timing, onProgress, async (count, running) => {
      await sub.consume(queue, (msg) => {
        if (!msg) return;
        sub.ack(msg);
        count();
      });
      await new Promise<void>((resolve, reject) => {
        let outstanding = 0;
        const pump = () => {
          while (running() && outstanding < AMQP_WINDOW) {
            outstanding++;
            pub.publish("", queue, body, { persistent: true }, (err) => {
              outstanding--;
              if (err) reject(err);
              else pump();
            });
          }
          if (!running() && outstanding === 0) resolve();
        };
        pump();
      });
    });
  } finally {
    const ch = await conn.createChannel();
    await ch.deleteQueue(queue);
    await conn.close();
  }
}

const PG_CLIENTS = 16;

export async function postgresCeiling(
  databaseUrl: string,
  timing: Timing,
  onProgress: OnProgress,
): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: PG_CLIENTS });
  // `end()` resolves before its connections have closed: when the next step drops the database,
  // a closing connection reports the server's shutdown here, and unheard it would end the run.
  pool.on("error", () => {});
  const table = `bench_ceiling_${randomBytes(5).toString("hex")}`;
  try {
    await pool.query(
      `CREATE TABLE ${table} (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    const insert = {
      name: `insert_${table}`,
      text: `INSERT INTO ${table} (payload) VALUES ($1)`,
      values: ["x".repeat(KB)],
    };
    return await measure(timing, onProgress, async (count, running) => {
      await Promise.all(
        Array.from({ length: PG_CLIENTS }, async () => {
          while (running()) {
            await pool.query(insert);
            count();
          }
        }),
      );
    });
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  }
}

/** Runs `work` through the warm-up and the window; the rate of `count()` calls inside the window. */
async function measure(
  timing: Timing,
  onProgress: OnProgress,
  work: (count: () => void, running: () => boolean) => Promise<void>,
): Promise<number> {
  const t0 = performance.now();
  const end = timing.warmMs + timing.measureMs;
  const clock = () => performance.now() - t0;
  let counted = 0;
  const report = () => {
    const t = clock();
    if (t < timing.warmMs) onProgress("warm-up", Math.ceil((timing.warmMs - t) / 1000));
    else onProgress("measure", Math.max(0, Math.ceil((end - t) / 1000)));
  };
  report();
  const timer = setInterval(report, 1000);
  try {
    await work(
      () => {
        const t = clock();
        if (t >= timing.warmMs && t < end) counted++;
      },
      () => clock() < end,
    );
  } finally {
    clearInterval(timer);
  }
  return perSecond(counted, timing.measureMs);
}
