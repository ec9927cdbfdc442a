import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_NODE_FLAGS } from "../support/processes.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type SteadyLoad, startSteadyLoad } from "../support/steadyLoad.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts";

/**
 * Faults under steady load: PostgreSQL or RabbitMQ goes away while events keep coming (50 a
 * second, each retried by its sender with its Idempotency-Key after a 503), on the machine's
 * own servers and on the links to them (TCP proxies the test cuts). The whole system runs as
 * `npm start` runs it: gateway, dispatcher and sender, each its own process. Each fault must
 * leave every process running, every accepted event delivered, and each outage logged once
 * per process, not once per retry; what it cost (answers other than 201, how soon events
 * were accepted and delivered again, duplicates) is printed, and the guarantees in
 * docs/delivery.md quote it. Runs alone, and puts back what it stopped even when it fails.
 */
const PER_SECOND = 50;
const PG_VERSION = readdirSync("/etc/postgresql")[0]!;
const run = promisify(execFile);
const pgctl = (...args: string[]) =>
  run("pg_ctlcluster", ["--skip-systemctl-redirect", PG_VERSION, "main", ...args], { timeout: 60_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let pgProxy: TcpProxy;
let amqpProxy: TcpProxy;
let receiver: Receiver;
let stack: Stack;
let key: string;

async function pgIsUp(): Promise<boolean> {
  return run("pg_isready", ["-h", "127.0.0.1", "-p", "5432", "-t", "2"]).then(
    () => true,
    () => false,
  );
}

/** Whatever a fault stopped, started again (after a failed test too). */
async function putBack(): Promise<void> {
  if (!(await pgIsUp())) await pgctl("start");
  await run("rabbitmqctl", ["start_app"], { timeout: 60_000 }).catch(() => {});
  await pgProxy?.restore().catch(() => {});
  await amqpProxy?.restore().catch(() => {});
}

beforeAll(async () => {
  pgProxy = await startTcpProxy("127.0.0.1", 5432);
  amqpProxy = await startTcpProxy("127.0.0.1", 5672);
  receiver = await startReceiver();
  receiver.on("/faults", () => ({ status: 200, delayMs: Math.floor(Math.random() * 10) }));
  stack = await startStack(
    {
      RETRY_SCHEDULE: "1s,2s,5s,10s,10s,10s,10s",
      ATTEMPT_TIMEOUT: "5s",
      SWEEP_INTERVAL: "2s",
      SWEEP_GRACE: "10s",
      // An attempt marked sent that no sender holds is sent again after this (10 min by
      // default): short here, so such a stray is delivered (and counted) within the test's wait.
      ATTEMPT_DEADLINE: "30s",
      OUTBOX_RELAY_INTERVAL: "1s",
      OUTBOX_RELAY_AFTER: "3s",
    },
    SERVICE_NODE_FLAGS,
    {
      database: (url) => {
        const via = new URL(url);
        via.port = String(pgProxy.port);
        return via.toString();
      },
      amqp: `amqp://guest:guest@127.0.0.1:${amqpProxy.port}`,
    },
  );
  key = await stack.newAccount("faults");
  const setup: [string, unknown][] = [
    ["/v3/apps", { uid: "faults", name: "Faults" }],
    ["/v3/event-types", { name: "fault.tested" }],
    ["/v3/endpoints", { app: "faults", url: `${receiver.url}/faults` }],
  ];
  for (const [path, body] of setup) {
    const res = await stack.request(key, "POST", path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}, 120_000);

afterEach(putBack, 120_000);

afterAll(async () => {
  await putBack();
  await stack?.close();
  await receiver?.close();
  await pgProxy?.close();
  await amqpProxy?.close();
}, 120_000);

/** Where events not delivered are: their fan-out, deliveries, attempts and outbox rows. */
async function whereAre(ids: string[]): Promise<unknown> {
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(
      `SELECT e.id, e.fanned_out_at,
         (SELECT json_agg(json_build_object('status', d.status, 'id', d.id)) FROM deliveries d WHERE d.event_id = e.id) AS deliveries,
         (SELECT json_agg(json_build_object('n', a.attempt_number, 'status', a.status, 'sent_at', a.sent_at,
            'scheduled_at', a.scheduled_at)) FROM attempts a WHERE a.event_id = e.id) AS attempts,
         (SELECT count(*) FROM outbox o WHERE o.payload::text LIKE '%' || e.id || '%') AS outbox_rows
       FROM events e WHERE e.id = ANY($1)`,
      [ids.slice(0, 10)],
    );
    const flows = await db.query("SELECT * FROM endpoint_flows");
    const queues = await run("rabbitmqctl", [
      "list_queues",
      "-q",
      "name",
      "messages_ready",
      "messages_unacknowledged",
    ]);
    const logs = stack.services.map((s) => ({
      service: s.name,
      warnings: s
        .output()
        .split("\n")
        .filter((l) => /"level":(40|50|60)/.test(l))
        .slice(-15),
    }));
    return {
      events: rows,
      flows: flows.rows,
      queues: queues.stdout.split("\n").filter((l) => / [1-9]/.test(l)),
      logs,
    };
  } finally {
    await db.end();
  }
}

/** Lines of a service's output since `from` (a length of its output) that match `re`. */
const linesSince = (output: string, from: number, re: RegExp) =>
  output
    .slice(from)
    .split("\n")
    .filter((l) => re.test(l)).length;

/**
 * Steady load, then the fault for `holdMs`, then its end, then more load: every event
 * accepted is delivered, no process exited, each outage logged at most once per process
 * (twice if a failure raced the first reconnection: never a line per retry). Prints the cost,
 * with the attempts left for the sweeper's ATTEMPT_DEADLINE (marked sent, held by no sender):
 * they are delivered late, not lost, and may belong to the fault before (the stack is shared).
 */
async function underFault(
  name: string,
  fault: { inject: () => Promise<unknown>; restore: () => Promise<unknown>; holdMs: number },
): Promise<void> {
  const arrivedBefore = receiver.received("/faults").length;
  const outputBefore = stack.services.map((s) => s.output().length);
  const load: SteadyLoad = startSteadyLoad(
    stack.url,
    key,
    (i) => ({ app: "faults", type: "fault.tested", data: { fault: name, i } }),
    PER_SECOND,
  );
  let restoredAt = 0;
  try {
    await sleep(3_000);
    await fault.inject();
    await sleep(fault.holdMs);
    await fault.restore();
    restoredAt = Date.now();
    await sleep(5_000);
  } finally {
    await load.stop();
  }
  expect(load.lost, "events clients gave up on").toEqual([]);

  const ids = new Set(load.accepted.map((a) => a.id));
  const arrivals = () => receiver.received("/faults").slice(arrivedBefore);
  const delivered = () => new Set(arrivals().map((r) => String(r.headers["webhook-id"])));
  const missing = () => [...ids].filter((id) => !delivered().has(id));
  await expect
    .poll(() => missing().length, { timeout: 120_000, interval: 500 })
    .toBe(0)
    .catch(async (err) => {
      throw new Error(
        `${(err as Error).message}\nwhere they are: ${JSON.stringify(await whereAre(missing()))}`,
      );
    });
  expect(stack.exited(), "services that exited").toEqual([]);

  for (const [i, service] of stack.services.entries()) {
    const output = service.output();
    for (const dependency of ["database", "broker"]) {
      const down = linesSince(output, outputBefore[i]!, new RegExp(`${dependency} unavailable`));
      const back = linesSince(output, outputBefore[i]!, new RegExp(`${dependency} available again`));
      expect(down, `${service.name}: ${dependency} outages logged`).toBeLessThanOrEqual(2);
      expect(back, `${service.name}: ${dependency} returns logged`).toBe(down);
    }
  }

  const dispatcher = stack.services.find((s) => s.name === "dispatcher")!;
  const swept = dispatcher
    .output()
    .slice(outputBefore[stack.services.indexOf(dispatcher)])
    .split("\n")
    .filter((l) => l.includes("sweeper recovering attempts sent with no result"))
    .reduce((n, l) => n + Number(/"attempts":(\d+)/.exec(l)?.[1] ?? 0), 0);

  // What it cost.
  const firstAccepted = load.accepted.filter((a) => a.at >= restoredAt).sort((a, b) => a.at - b.at)[0];
  const before = new Set(load.accepted.filter((a) => a.at < restoredAt).map((a) => a.id));
  const lastOfThose = Math.max(
    ...arrivals()
      .filter((r) => before.has(String(r.headers["webhook-id"])))
      .map((r) => r.at),
  );
  const requests = arrivals().filter((r) => ids.has(String(r.headers["webhook-id"]))).length;

  const refused = [...load.refused].map(([what, n]) => `${n} × ${what}`).join(", ") || "none";
  const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  console.log(
    `fault: ${name}: ${ids.size} events accepted at ${PER_SECOND}/s, all delivered, no process exited; ` +
      `answers other than 201: ${refused}; accepting again ${firstAccepted ? seconds(firstAccepted.at - restoredAt) : "n/a"} ` +
      `and every event accepted before delivered ${seconds(lastOfThose - restoredAt)} after it was back; ` +
      `${requests - ids.size} duplicate deliveries; ${swept} attempt(s) the sweeper sent again (ATTEMPT_DEADLINE)`,
  );
}

/** The link to a server cut (connections dropped, new ones refused) for 10 s, then restored. */
const linkCut = (server: string, proxy: TcpProxy) =>
  underFault(`link to ${server} cut for 10 s`, {
    inject: () => proxy.cut(),
    restore: () => proxy.restore(),
    holdMs: 10_000,
  });

describe("faults under steady load", () => {
  it("rides through PostgreSQL stopped for 10 s and started", async () => {
    await underFault("PostgreSQL stopped (-m fast) for 10 s", {
      inject: () => pgctl("stop", "-m", "fast"),
      restore: () => pgctl("start"),
      holdMs: 10_000,
    });
  });

  it("rides through PostgreSQL stopped with -m immediate (a crash) and started", async () => {
    await underFault("PostgreSQL stopped (-m immediate) and started", {
      inject: () => pgctl("stop", "-m", "immediate"),
      restore: () => pgctl("start"),
      holdMs: 3_000,
    });
  });

  it("rides through the link to PostgreSQL cut for 10 s", () => linkCut("PostgreSQL", pgProxy));

  it("rides through PostgreSQL slow: a lock held 10 s on every endpoint's flow", async () => {
    const locker = new pg.Client({ connectionString: stack.databaseUrl });
    await locker.connect();
    try {
      await underFault("PostgreSQL slow: endpoint flows locked for 10 s", {
        inject: async () => {
          await locker.query("BEGIN");
          await locker.query("SELECT endpoint_id FROM endpoint_flows FOR UPDATE");
        },
        restore: () => locker.query("COMMIT"),
        holdMs: 10_000,
      });
    } finally {
      await locker.end();
    }
  });

  it("rides through RabbitMQ stopped for 10 s (stop_app, start_app)", async () => {
    await underFault("RabbitMQ stopped (stop_app) for 10 s", {
      inject: () => run("rabbitmqctl", ["stop_app"], { timeout: 60_000 }),
      restore: () => run("rabbitmqctl", ["start_app"], { timeout: 60_000 }),
      holdMs: 10_000,
    });
  });

  it("rides through the link to RabbitMQ cut for 10 s", () => linkCut("RabbitMQ", amqpProxy));
});
