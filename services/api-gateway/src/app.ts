import type { Server } from "node:http";
import { Broker } from "@herald/broker";
import { createPool, createPrisma, createSecretBox } from "@herald/db";
import { DatabaseOutage } from "@herald/db/outage";
import { Gauge, type Logger, type Registry } from "@herald/runtime";
import { TransformPool } from "@herald/transform";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { ensureBootstrapAccount } from "./bootstrap.ts";
import { createCaches } from "./cache.ts";
import type { GatewayConfig } from "./config.ts";
import type { Deps } from "./context.ts";
import { EventWriter } from "./eventWriter.ts";
import { bodyParserError } from "./http/body.ts";
import { ApiError, answerClientError, internal, malformedPathError, unavailable } from "./http/errors.ts";
import { IDEMPOTENCY_TTL_MS, Placeholders } from "./http/idempotency.ts";
import { observeRequests } from "./http/observe.ts";
import { RateLimiter } from "./http/rateLimit.ts";
import { notFoundHandler, registerRoutes } from "./http/register.ts";
import { PAGE_CSP, securityHeaders } from "./http/securityHeaders.ts";
import { attachListen, type ListenSockets } from "./listen/socket.ts";
import { renderDocsPage } from "./openapi/docsPage.ts";
import { buildOpenApi } from "./openapi/document.ts";
import { OutboxRelay } from "./outboxRelay.ts";
import { servePages } from "./pages.ts";
import { sealLegacyHeaders } from "./resources/endpoints/headers.ts";
import { TRANSFORMATION_QUEUES } from "./resources/endpoints/transformation.ts";
import { componentSchemas, routes } from "./routes.ts";
import { SchemaPool } from "./schemas/pool.ts";
import { serveSso } from "./sso/routes.ts";

export type Gateway = {
  app: Express;
  deps: Deps;
  /** Connects, bootstraps, and listens; resolves with the server once it accepts requests. */
  start(): Promise<Server>;
  /** Stops taking requests, finishes those in flight, flushes the outbox, closes connections. */
  stop(): Promise<void>;
};

/**
 * Every error a route throws, in the API's format: its own (ApiError), the caller's mistake,
 * the database away (503 with Retry-After, logged once per outage: OutageLog), or else an
 * opaque 500, logged with its stack.
 */
function errorHandler(logger: Logger, dbOutage: DatabaseOutage) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // The client went away mid-request (its upload reset): nobody to answer, nothing of ours.
    if (req.socket.destroyed) return;
    const known = err instanceof ApiError ? err : (bodyParserError(err) ?? malformedPathError(err));
    const away = !known && dbOutage.is(err);
    if (away) dbOutage.failed(err);
    const error = known ?? (away ? unavailable() : internal());
    if (!known && !away) logger.error({ err, method: req.method, path: req.path }, "request failed");
    res.set(error.headers).status(error.status).json(error.toBody());
  };
}

/** Runs `work` until it runs without the database being away, a second between tries. */
async function whenDatabaseAnswers(dbOutage: DatabaseOutage, work: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (!dbOutage.is(err)) throw err;
      dbOutage.failed(err);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export function createGateway(config: GatewayConfig, logger: Logger, registry: Registry): Gateway {
  // One pool of DATABASE_POOL_SIZE connections, shared by Prisma and the event writer.
  const dbOutage = new DatabaseOutage(logger);
  const pool = createPool(config.databaseUrl, config.databasePoolSize, dbOutage);
  const prisma = createPrisma(pool);
  let outbox: OutboxRelay | null = null;
  const broker = new Broker({
    url: config.amqpUrl,
    prefix: config.amqpPrefix,
    logger,
    onConnected: () => void outbox?.kick(),
  });
  outbox = new OutboxRelay(prisma, pool, broker, logger, dbOutage, {
    relayIntervalMs: config.outboxRelayIntervalMs,
    relayAfterMs: config.outboxRelayAfterMs,
    eventsPerMessage: config.eventsPerMessage,
  });
  const deps: Deps = {
    config,
    prisma,
    pool,
    caches: createCaches(),
    events: new EventWriter(pool),
    broker,
    outbox,
    secrets: createSecretBox(config.encryptionKey),
    schemas: new SchemaPool(
      {
        workers: config.schemaWorkers,
        compileTimeoutMs: config.schemaCompileTimeoutMs,
        validateTimeoutMs: config.schemaValidateTimeoutMs,
        heapMb: config.schemaWorkerHeapMb,
        cacheBytes: 24 * 1024 * 1024,
        // Each waiting request holds its body (up to 1 MiB parsed): a few, not many.
        queuePerAccount: 16,
      },
      logger,
    ),
    // Started with the first transformation saved or tried: an installation without any pays nothing.
    transforms: new TransformPool({
      ...config.transformations,
      cached: 64,
      // Each waiting try-it holds its event (up to 1 MiB) and its input, about 2 MiB: 4 a portal
      // session, 8 an account, 32 in all (64 MiB of the 160 MB heap), none for more than
      // TRANSFORMATION_WAIT_MS. Why so few: TRANSFORMATION_QUEUES.
      ...TRANSFORMATION_QUEUES,
    }),
    transformLimiter: new RateLimiter(config.transformationRateLimitPerSecond),
    logger,
    dbOutage,
    placeholders: new Placeholders(prisma, logger),
  };
  const openapi = buildOpenApi(routes, componentSchemas, config.publicUrl);
  const docsPage = renderDocsPage(openapi);

  new Gauge({
    name: "herald_outbox_backlog",
    help: "Messages written but not yet confirmed by RabbitMQ",
    registers: [registry],
    async collect() {
      this.set(await prisma.outboxMessage.count().catch(() => -1));
    },
  });

  new Gauge({
    name: "herald_schema_work",
    help: "Customers' schemas since start, by kind: checks, checks answered from cache, event validations, checks or validations stopped at their time limit or heap, requests refused because the account had too many waiting, and workers replaced",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      for (const [kind, count] of Object.entries(deps.schemas.counts)) this.set({ kind }, count);
    },
  });

  new Gauge({
    name: "herald_transformation_work",
    help: "Endpoints' transformations since start, by kind: runs (try-its), compiles (saves), failures, workers replaced after a run outlived its budget, and runs refused because their owner had too many waiting",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      for (const [kind, count] of Object.entries(deps.transforms.counts)) this.set({ kind }, count);
    },
  });

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // The client's address (`req.ip`, in the audit log) from the proxies' X-Forwarded-For, as
  // many hops back as are trusted; none by default, where anyone could write the header.
  app.set("trust proxy", config.trustProxy);
  app.use(observeRequests(registry));
  app.use(securityHeaders);
  app.get("/metrics", async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const database = await prisma.$queryRaw`SELECT 1`.then(
      () => true,
      () => false,
    );
    const brokerUp = await broker.ping();
    res.status(database && brokerUp ? 200 : 503).json({
      status: database && brokerUp ? "ready" : "unavailable",
      checks: { database: database ? "ok" : "unreachable", broker: brokerUp ? "ok" : "unreachable" },
    });
  });
  app.get("/v3/openapi.json", (_req, res) => {
    res.json(openapi);
  });
  app.get("/docs", (_req, res) => {
    res.set("Content-Security-Policy", PAGE_CSP).type("html").send(docsPage);
  });
  servePages(app, config.webDist);
  serveSso(app, deps);
  const limiters = {
    account: new RateLimiter(config.rateLimitPerSecond),
    portal: new RateLimiter(config.portalRateLimitPerSecond),
  };
  registerRoutes(app, routes, deps, limiters);
  app.use(notFoundHandler);
  app.use(errorHandler(logger, dbOutage));

  let server: Server | null = null;
  let listen: ListenSockets | null = null;
  let housekeeping: NodeJS.Timeout | null = null;
  return {
    app,
    deps,
    async start() {
      // A database not up yet (started together, restarting) is waited for, not a failed start.
      await whenDatabaseAnswers(dbOutage, async () => {
        if (config.bootstrapApiKey) await ensureBootstrapAccount(prisma, config.bootstrapApiKey, logger);
        await sealLegacyHeaders(prisma, deps.secrets, logger);
      });
      // Serve even while the broker is down: events go to the outbox and are relayed later.
      if (!(await broker.start(3000)))
        logger.warn("broker not reachable yet; events will be relayed once it is");
      outbox.start();
      housekeeping = setInterval(() => {
        void prisma.idempotencyRecord
          .deleteMany({ where: { createdAt: { lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) } } })
          .catch((err) => logger.warn({ err }, "could not delete expired idempotency records"));
      }, 600_000);
      housekeeping.unref();
      const listening = app.listen(config.port, config.host);
      listening.on("clientError", answerClientError);
      await new Promise<void>((resolve, reject) => {
        listening.once("listening", resolve);
        listening.once("error", reject);
      });
      server = listening;
      listen = attachListen(listening, deps, { limiter: limiters.account, registry });
      return listening;
    },
    async stop() {
      if (housekeeping) clearInterval(housekeeping);
      // Each `herald listen` socket closed, its endpoint deleted, while the database is here.
      await listen?.close();
      if (server) {
        const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
        server.closeIdleConnections();
        await closing;
      }
      await outbox.stop();
      deps.placeholders.stop();
      await broker.close();
      await prisma.$disconnect();
      await pool.end();
      await deps.schemas.close();
      await deps.transforms.close();
    },
  };
}
