import { randomBytes } from "node:crypto";
import { readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureDatabase } from "@herald/db";
import { parseDuration } from "@herald/runtime";
import amqp from "amqplib";
import pg from "pg";
import type { Build } from "./builds.ts";
import { onCleanUp } from "./cleanup.ts";
import type { Gateway } from "./protocol.ts";
import {
  freePort,
  type Launch,
  type Service,
  type ServiceOutput,
  spawnService,
  stopServices,
  waitReady,
} from "./services.ts";

/**
 * The system under load: one the benchmark started (own database and queue prefix; stopping it and
 * removing its queues is registered with cleanup.ts as soon as it spawns) or one given by --url.
 */
export type System = {
  gateway: Gateway;
  /** The service processes, for memory figures; none for a system given by --url. */
  processes: { label: string; pid: number }[];
  /** Rejects as soon as a service exits on its own. */
  failed: Promise<never>;
  /** Waits until the queues are empty, so one scenario's backlog does not load the next. */
  settle: (timeoutMs: number) => Promise<void>;
  /**
   * What waits in the system now: messages in its queues (ready, not those a consumer holds) and
   * deliveries not yet finished (`pending` or `retrying`) to the endpoint `endpointId`. Null for
   * a system given by --url.
   */
  backlog: (endpointId: string) => Promise<{ queued: number; open: number } | null>;
  output: () => ServiceOutput[];
  /** Stops the services and removes their queues; also registered with cleanup.ts. */
  stop: () => Promise<void>;
};

export type SystemOptions = {
  launch: Launch;
  /** The build the services are of: its queues' names. */
  build: Build;
  databaseUrl: string;
  amqpUrl: string;
  dispatchers: number;
  senders: number;
  logLevel: string;
  env: Record<string, string>;
  logDir: string;
  cpuProfDir: string | null;
};

const DEFAULT_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";

/** The database named `herald_bench` on the server of `base`. */
export function benchDatabaseUrl(base: string): string {
  const url = new URL(base);
  url.pathname = "/herald_bench";
  return url.toString();
}

/**
 * Drops and recreates the bench database, then migrates it with `build`'s migrations: each run
 * starts empty. Its delivery log then holds as many partitions as a system's at the default
 * retention does (31 days of daily ranges and two ahead; made ahead here, as past ones cannot
 * be), so that statements pay for every partition they cannot prune, as they would in a
 * deployment (builds.ts).
 */
export async function freshDatabase(databaseUrl: string, build: Build): Promise<void> {
  const admin = new URL(databaseUrl);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await ensureDatabase(databaseUrl);
  await build.migrate(databaseUrl);
}

/**
 * Removes what the last scenario left dead in the bench database, as autovacuum does in a
 * deployment: this machine's PostgreSQL may run without it (a CI configuration), and without a
 * vacuum a hot endpoint's queue index fills with the dead entries of every attempt it was sent,
 * which the release gate then walks on each fan-out (0.8 ms per scan after 10,000 deliveries).
 */
export async function vacuum(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Those of the build's schema: an older one may lack some (endpoint_flows, outbox).
    const { rows } = await client.query<{ name: string }>(
      "SELECT relname AS name FROM pg_class WHERE relname = ANY($1) AND relkind IN ('r', 'p') ORDER BY 1",
      [VACUUMED],
    );
    if (rows.length)
      await client.query(`VACUUM (ANALYZE) ${rows.map((r) => pg.escapeIdentifier(r.name)).join(", ")}`);
  } finally {
    await client.end();
  }
}

const VACUUMED = ["attempts", "deliveries", "endpoint_flows", "events", "outbox"];

/** Node names profiles `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`; this prefixes the service. */
async function labelProfiles(dir: string, services: Service[]): Promise<void> {
  const files = await readdir(dir).catch(() => [] as string[]);
  for (const file of files) {
    const pid = Number(/^CPU\.\d+\.\d+\.(\d+)\./.exec(file)?.[1]);
    const service = services.find((s) => s.pid === pid);
    if (service) await rename(join(dir, file), join(dir, `${service.label}.${file}`));
  }
}

export async function startSystem(o: SystemOptions): Promise<System> {
  await rm(o.logDir, { recursive: true, force: true });
  const prefix = `bench_${randomBytes(5).toString("hex")}`;
  const apiKey = `hk_${randomBytes(32).toString("base64url")}`;
  const port = await freePort();
  const conn = await amqp.connect(o.amqpUrl);
  conn.on("error", () => {});
  const channel = await conn.createChannel();
  const names = o.build.topology(prefix);
  const shared: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: o.databaseUrl,
    AMQP_URL: o.amqpUrl,
    AMQP_PREFIX: prefix,
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    ALLOW_PRIVATE_DESTINATIONS: "true",
    LOG_LEVEL: o.logLevel,
    HEALTH_HOST: "127.0.0.1",
    ...o.env,
  };
  const services: Service[] = [];
  let stopping = false;
  const spawnOptions = { launch: o.launch, logDir: o.logDir, cpuProfDir: o.cpuProfDir };
  const gatewayEnv = {
    ...shared,
    HOST: "127.0.0.1",
    ADMIN_TOKEN: randomBytes(24).toString("base64url"),
    BOOTSTRAP_API_KEY: apiKey,
    // Unlimited: the benchmark measures the system, not the limiters (it saves eleven
    // transformations in a row, past the compile rate's burst).
    RATE_LIMIT_PER_SECOND: "0",
    TRANSFORMATION_RATE_LIMIT_PER_SECOND: "0",
    ...o.env,
    PORT: String(port),
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  services.push(spawnService("api-gateway", "api-gateway", gatewayEnv, `${baseUrl}/readyz`, spawnOptions));
  for (const [kind, n] of [
    ["dispatcher", o.dispatchers],
    ["sender", o.senders],
  ] as const) {
    for (let i = 1; i <= n; i++) {
      const health = await freePort();
      const env = { ...shared, HEALTH_PORT: String(health) };
      const label = n > 1 ? `${kind}-${i}` : kind;
      services.push(spawnService(kind, label, env, `http://127.0.0.1:${health}/readyz`, spawnOptions));
    }
  }
  let stopped: Promise<void> | null = null;
  const stop = () => (stopped ??= stopAndRemove());
  const stopAndRemove = async () => {
    stopping = true;
    await stopServices(services);
    if (o.cpuProfDir) await labelProfiles(o.cpuProfDir, services);
    const schedule = (o.env.RETRY_SCHEDULE ?? DEFAULT_SCHEDULE).split(",").map((s) => parseDuration(s));
    const delays = [...new Set(schedule.filter((ms): ms is number => ms !== null))];
    for (const queue of [...Object.values(names.queues), names.deadQueue, ...delays.map(names.delayQueue)])
      await channel.deleteQueue(queue);
    for (const exchange of [names.exchange, names.deadExchange]) await channel.deleteExchange(exchange);
    await conn.close();
    await db?.end().catch(() => {});
  };
  /** A connection of its own for the backlog's count, opened on first use. */
  let db: pg.Client | null = null;
  const openDeliveries = async (endpointId: string): Promise<number> => {
    if (!db) {
      db = new pg.Client({ connectionString: o.databaseUrl });
      db.on("error", () => {});
      await db.connect();
    }
    // The index on (endpoint_id, status, id) of every build answers it from the endpoint's
    // open entries alone.
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status IN ('pending', 'retrying')",
      [endpointId],
    );
    return rows[0]?.n ?? 0;
  };
  const kill = () => {
    for (const s of services) s.kill("SIGKILL");
  };
  // Registered at once, so a Ctrl-C while the services start still stops them.
  onCleanUp(stop, kill);
  const failed = new Promise<never>((_, reject) => {
    for (const s of services)
      s.exited.then(({ code, signal }) => {
        if (!stopping)
          reject(new Error(`${s.label} exited (${signal ?? code}) during the run:\n${s.tail()}`));
      });
  });
  failed.catch(() => {});
  try {
    await Promise.all(services.map((s) => waitReady(s)));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    gateway: { baseUrl, apiKey },
    processes: services.map((s) => ({ label: s.label, pid: s.pid })),
    failed,
    async settle(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const queues = Object.values(names.queues);
      while (Date.now() < deadline) {
        const counts = await Promise.all(queues.map((q) => channel.checkQueue(q)));
        if (counts.every((c) => c.messageCount === 0)) break;
        await sleep(200);
      }
      // Messages in the consumers' hands (prefetched, not yet acked) do not show in the counts.
      await sleep(500);
      await vacuum(o.databaseUrl);
    },
    async backlog(endpointId) {
      const [counts, open] = await Promise.all([
        Promise.all(Object.values(names.queues).map((q) => channel.checkQueue(q))),
        openDeliveries(endpointId),
      ]);
      return { queued: counts.reduce((sum, c) => sum + c.messageCount, 0), open };
    },
    output: () => services.map((s) => s.output()),
    stop,
  };
}

/** A system someone else runs (--url, --key): nothing to start, stop or measure the memory of. */
export function runningSystem(baseUrl: string, apiKey: string): System {
  return {
    gateway: { baseUrl, apiKey },
    processes: [],
    failed: new Promise<never>(() => {}),
    settle: () => sleep(1000),
    backlog: async () => null,
    output: () => [],
    stop: async () => {},
  };
}
