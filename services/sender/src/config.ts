import { RESULTS_PER_MESSAGE } from "@herald/contracts";
import {
  DESTINATION_TYPES,
  type DestinationType,
  destinationTypesFrom,
} from "@herald/contracts/destinations";
import { ConfigReader, type Env } from "@herald/runtime";
import { parseNoProxy, proxyAuthorization } from "./egress.ts";

export type SenderConfig = {
  amqpUrl: string;
  amqpPrefix: string;
  encryptionKey: Buffer;
  concurrency: number;
  backlogConcurrency: number;
  /** Attempts whose message is over LARGE_MESSAGE_BYTES at once: what large messages one sender holds. */
  largeConcurrency: number;
  /** Attempt outcomes reported per message at most; 1 publishes `attempt.completed.v1`, one each. */
  resultsPerMessage: number;
  attemptTimeoutMs: number;
  allowPrivateDestinations: boolean;
  /** Every webhook goes out through this HTTP proxy (CONNECT), unless its host is on egressNoProxy. */
  egressProxyUrl: URL | null;
  egressNoProxy: string;
  /** TRANSFORMATION_*: how endpoints' transformations run (worker threads, time and memory per run). */
  transformations: { workers: number; timeoutMs: number; memoryBytes: number };
  /** DESTINATION_TYPES: attempts to endpoints of other types fail as blocked_destination. */
  destinationTypes: DestinationType[];
  userAgent: string;
  healthPort: number;
  healthHost: string;
};

/** EGRESS_PROXY_URL, an http URL; a mistake is named without its password. */
function egressProxy(r: ConfigReader): URL | null {
  const raw = r.string("EGRESS_PROXY_URL");
  if (raw === undefined) return null;
  const url = URL.canParse(raw) ? new URL(raw) : null;
  const problem = !url
    ? "must be an http URL such as http://proxy.internal:3128"
    : url.protocol !== "http:"
      ? `must be an http URL (the tunnel is CONNECT over HTTP), got ${url.protocol}`
      : null;
  if (problem) {
    r.problems.push(`EGRESS_PROXY_URL ${problem}`);
    return null;
  }
  try {
    proxyAuthorization(url!);
  } catch (err) {
    r.problems.push((err as Error).message);
    return null;
  }
  return url;
}

/** EGRESS_NO_PROXY, checked: a CIDR that does not parse is a config error, not a crash. */
function egressNoProxy(r: ConfigReader): string {
  const raw = r.string("EGRESS_NO_PROXY", "");
  try {
    parseNoProxy(raw);
  } catch (err) {
    r.problems.push(
      `EGRESS_NO_PROXY has an entry that is not a host, an address or a CIDR: ${(err as Error).message}`,
    );
  }
  return raw;
}

export function loadConfig(env: Env = process.env): SenderConfig {
  const r = new ConfigReader(env);
  const destinations = destinationTypesFrom(r.string("DESTINATION_TYPES", ""));
  r.check(
    !destinations.unknown.length,
    `DESTINATION_TYPES has types Herald does not know: ${destinations.unknown.join(", ")} (it knows ${DESTINATION_TYPES.join(", ")})`,
  );
  const config: SenderConfig = {
    destinationTypes: destinations.types,
    transformations: r.transformations(),
    ...r.broker(),
    encryptionKey: r.encryptionKey(
      "the same key the api-gateway uses: endpoint secrets arrive sealed with it",
    ),
    // Per lane: first attempts of new events, and retries and replays.
    concurrency: r.int("SENDER_CONCURRENCY", 512, { min: 1, max: 10_000 }),
    backlogConcurrency: r.int("SENDER_BACKLOG_CONCURRENCY", 256, { min: 1, max: 10_000 }),
    // Messages over LARGE_MESSAGE_BYTES, first attempts or not: each up to about 3 MiB as
    // received (1.5 MiB of data, its quotes escaped), so 8 stay far inside the heap; and each
    // takes 10 to 50 ms of the event loop to read, so more at once would hold small ones back
    // (docs/operations.md, "Limits").
    largeConcurrency: r.int("SENDER_LARGE_CONCURRENCY", 8, { min: 1, max: 1000 }),
    // 1 while dispatchers older than `attempts.completed.v1` still run (an upgrade's rollout).
    resultsPerMessage: r.int("SENDER_RESULTS_PER_MESSAGE", RESULTS_PER_MESSAGE, {
      min: 1,
      max: RESULTS_PER_MESSAGE,
    }),
    // The cap on each attempt; the dispatcher's own ATTEMPT_TIMEOUT comes with each request.
    attemptTimeoutMs: r.attemptTimeout(),
    allowPrivateDestinations: r.bool("ALLOW_PRIVATE_DESTINATIONS", false),
    egressProxyUrl: egressProxy(r),
    egressNoProxy: egressNoProxy(r),
    userAgent: r.string("USER_AGENT", "Herald-Webhooks/1.0"),
    ...r.health(8082),
  };
  r.logLevel();
  r.done();
  return config;
}
