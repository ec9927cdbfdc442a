import type { Server } from "node:http";
import { Broker, RelayClient } from "@herald/broker";
import type { AttemptRequestedV1 } from "@herald/contracts";
import { createSecretBox, type SecretBox } from "@herald/db/secrets";
import {
  annotate,
  closeServer,
  type Logger,
  type Registry,
  startHealthServer,
  traceIdOf,
} from "@herald/runtime";
import { TransformPool } from "@herald/transform";
import type { SenderConfig } from "./config.ts";
import { type DeliverOptions, deliver } from "./deliver.ts";
import { egressAgents, parseNoProxy } from "./egress.ts";
import { senderMetrics } from "./metrics.ts";
import { resultReporter } from "./reports.ts";
import { TokenCache } from "./tokens.ts";
import { transports } from "./transports/index.ts";

/** Opened secrets kept at most, and characters of them and their sealed forms in all. */
const OPENED_MAX = 10_000;
const OPENED_CHARS_MAX = 32 * 1024 * 1024;

/**
 * Compiled transformations each worker keeps (least recently used out first), and runs of one
 * endpoint's that may wait for a worker: past that, they fail at once as `transformation_busy`
 * (retried later) rather than queue without end behind an endpoint whose code is slow. All of
 * one account's may hold half the sender's slots (`slots`), which every account's attempts share.
 */
const TRANSFORMATIONS_CACHED = 256;
const TRANSFORMATION_QUEUE_PER_ENDPOINT = 1000;
/**
 * The WebAssembly heap a transformation worker may grow before it is replaced (a heap never
 * shrinks). A compiled transformation keeps about 90 KB, so 256 fit in 23 MB; what their code
 * keeps in its globals is the rest. Two workers at this, beside the sender's own heap, fit its pod.
 */
const TRANSFORMATION_HEAP_BYTES = 64 * 1024 * 1024;

/**
 * Opening a sealed secret (AES-GCM) for every attempt showed in the profile; an endpoint's
 * secret changes rarely, so opened ones are kept, keyed by their sealed form. Bounded in count
 * and in size: an endpoint's certificates and key make an entry of kilobytes, and one tenant
 * saving them again and again must not fill a sender's memory.
 */
function openedSecrets(box: SecretBox): SecretBox {
  const opened = new Map<string, string>();
  let chars = 0;
  return {
    seal: box.seal,
    open(sealed, context) {
      // Keyed by the context too: a value opens only where it was sealed.
      const key = `${context}\n${sealed}`;
      let plain = opened.get(key);
      if (plain === undefined) {
        plain = box.open(sealed, context);
        if (opened.size >= OPENED_MAX || chars + key.length + plain.length > OPENED_CHARS_MAX) {
          opened.clear();
          chars = 0;
        }
        opened.set(key, plain);
        chars += key.length + plain.length;
      }
      return plain;
    },
  };
}

export type Sender = {
  start(): Promise<void>;
  stop(): Promise<void>;
  broker: Broker;
  healthServer(): Server | null;
};

/**
 * A sender: takes `attempt.requested.v1`, makes the HTTP attempt, and reports its outcome
 * (`attempts.completed.v1`, several to a message: reports.ts), confirmed, before acking the request, so a sender killed
 * mid-attempt loses nothing: the request is redelivered to another. Stateless, no database;
 * run as many as the load needs (competing consumers). Three lanes, each with capacity of its
 * own: SENDER_CONCURRENCY first attempts of new events, and SENDER_BACKLOG_CONCURRENCY
 * retries and replays, so a backlog never takes the capacity live traffic needs; and
 * SENDER_LARGE_CONCURRENCY attempts of large messages, which bounds the memory they take. How many of
 * one endpoint's attempts are in flight is the dispatcher's release gate's to bound.
 */
export function createSender(config: SenderConfig, logger: Logger, registry: Registry): Sender {
  const broker = new Broker({ url: config.amqpUrl, prefix: config.amqpPrefix, logger });
  const reporter = resultReporter(broker, config.resultsPerMessage);
  // As many idle sockets kept per host as may be busy: with fewer, each burst past that many
  // closed the extra sockets after it and connected again for the next (measured: a fifth more
  // sender CPU per delivery with 10 endpoints per event on one host). Idle ones close after
  // ATTEMPT_TIMEOUT (`timeout`).
  const slots = config.concurrency + config.backlogConcurrency + config.largeConcurrency;
  const agentOptions = {
    keepAlive: true,
    maxSockets: slots,
    maxFreeSockets: slots,
    timeout: config.attemptTimeoutMs,
  };
  // Attempts to `herald listen` endpoints go through it, to the gateway holding the CLI's socket.
  const relay = new RelayClient(broker);
  const agents = egressAgents(agentOptions, config.egressProxyUrl, parseNoProxy(config.egressNoProxy));
  // Queues, streams, topics and buckets: each type's client, made at its first attempt.
  const destinations = transports(agents, config.attemptTimeoutMs);
  // Endpoints' transformations, in worker threads started with the first one run (none are
  // started where no endpoint has one); each compiled once per worker and kept by its hash.
  const transforms = new TransformPool({
    ...config.transformations,
    cached: TRANSFORMATIONS_CACHED,
    queuePerOwner: TRANSFORMATION_QUEUE_PER_ENDPOINT,
    queuePerAccount: Math.ceil(slots / 2),
    heapBytes: TRANSFORMATION_HEAP_BYTES,
  });
  const metrics = senderMetrics(registry, broker, transforms);
  const options: DeliverOptions = {
    secrets: openedSecrets(createSecretBox(config.encryptionKey)),
    agents,
    transports: destinations,
    destinationTypes: config.destinationTypes,
    timeoutMs: config.attemptTimeoutMs,
    allowPrivate: config.allowPrivateDestinations,
    userAgent: config.userAgent,
    relay,
    tokens: new TokenCache(config.attemptTimeoutMs),
    transforms,
  };
  let health: Server | null = null;
  let consuming = false;
  // Outcomes whose report failed to publish (the broker dropped): the consumer retries the
  // handler, which then reports again instead of making the attempt a second time.
  const unreported = new Map<string, Awaited<ReturnType<typeof deliver>>>();

  async function attempt(request: AttemptRequestedV1) {
    annotate({
      "herald.event_id": request.event_id,
      "herald.endpoint_id": request.endpoint_id,
      "herald.app_id": request.app_id,
      "herald.attempt_number": request.attempt_number,
    });
    const outcome = await deliver(request, options);
    const label = outcome.succeeded ? "succeeded" : outcome.cancelled ? "cancelled" : "failed";
    metrics.attempts.inc({ outcome: label, error: outcome.error ?? "none" });
    metrics.duration.observe({ outcome: label }, outcome.duration_ms / 1000);
    return outcome;
  }

  /**
   * `attempt.requested.v1`: makes the attempt and reports it. A redelivered request is made
   * again (at least once: receivers dedupe on `webhook-id`), unless its outcome is still here
   * unreported; the dispatcher records one result per attempt (`status = 'pending'`).
   */
  async function handle(request: AttemptRequestedV1): Promise<void> {
    // Between tasks of a busy loop: transformations answered meanwhile go on now (pool.ts).
    transforms.collect();
    const outcome = unreported.get(request.attempt_id) ?? (await attempt(request));
    transforms.collect();
    // Bounded: an entry whose message went to another sender is never collected otherwise.
    if (unreported.size > 10_000) unreported.clear();
    unreported.set(request.attempt_id, outcome);
    logger.info(
      {
        event: request.event_id,
        endpoint: request.endpoint_id,
        attempt: request.attempt_number,
        status: outcome.response_status,
        error: outcome.error,
        ms: outcome.duration_ms,
      },
      outcome.succeeded ? "attempt succeeded" : outcome.cancelled ? "attempt cancelled" : "attempt failed",
    );
    await reporter.report({
      attempt_id: request.attempt_id,
      delivery_id: request.delivery_id,
      event_id: request.event_id,
      endpoint_id: request.endpoint_id,
      ...outcome,
      trace_id: traceIdOf(),
      completed_at: new Date().toISOString(),
    });
    unreported.delete(request.attempt_id);
  }

  return {
    broker,
    healthServer: () => health,
    async start() {
      if (config.allowPrivateDestinations) {
        logger.warn(
          "ALLOW_PRIVATE_DESTINATIONS=true: endpoints on loopback and private networks are reachable (local use only)",
        );
      }
      health = await startHealthServer(
        config.healthPort,
        config.healthHost,
        // Ready once every lane is consumed, not at the broker's connection.
        async () => ({ broker: await broker.ping(), consuming }),
        registry,
      );
      await broker.start(5000);
      await broker.consume(
        "senderAttempts",
        { "attempt.requested.v1": (m) => handle(m.body) },
        config.concurrency,
      );
      await broker.consume(
        "senderBacklog",
        { "attempt.requested.v1": (m) => handle(m.body) },
        config.backlogConcurrency,
      );
      await broker.consume(
        "senderLarge",
        { "attempt.requested.v1": (m) => handle(m.body) },
        config.largeConcurrency,
      );
      consuming = true;
    },
    async stop() {
      consuming = false;
      await broker.stopConsuming();
      await relay.close();
      await destinations.close();
      await transforms.close();
      await broker.close();
      options.agents.destroy();
      if (health) await closeServer(health);
    },
  };
}
