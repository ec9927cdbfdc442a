import { RESULTS_PER_MESSAGE } from "@herald/contracts";
import { ConfigReader, type Env } from "@herald/runtime";

export type SenderConfig = {
  amqpUrl: string;
  amqpPrefix: string;
  encryptionKey: Buffer;
  concurrency: number;
  backlogConcurrency: number;
  /** Attempt outcomes reported per message at most; 1 publishes `attempt.completed.v1`, one each. */
  resultsPerMessage: number;
  attemptTimeoutMs: number;
  allowPrivateDestinations: boolean;
  /** Every webhook goes out through this HTTP proxy (CONNECT), unless its host is on egressNoProxy. */
  egressProxyUrl: URL | null;
  egressNoProxy: string;
  userAgent: string;
  healthPort: number;
  healthHost: string;
};

export function loadConfig(env: Env = process.env): SenderConfig {
  const r = new ConfigReader(env);
  const config: SenderConfig = {
    ...r.broker(),
    encryptionKey: r.encryptionKey(
      "the same key the api-gateway uses: endpoint secrets arrive sealed with it",
    ),
    // Per lane: first attempts of new events, and retries and replays.
    concurrency: r.int("SENDER_CONCURRENCY", 512, { min: 1, max: 10_000 }),
    backlogConcurrency: r.int("SENDER_BACKLOG_CONCURRENCY", 256, { min: 1, max: 10_000 }),
    // 1 while dispatchers older than `attempts.completed.v1` still run (an upgrade's rollout).
    resultsPerMessage: r.int("SENDER_RESULTS_PER_MESSAGE", RESULTS_PER_MESSAGE, {
      min: 1,
      max: RESULTS_PER_MESSAGE,
    }),
    // The cap on each attempt; the dispatcher's own ATTEMPT_TIMEOUT comes with each request.
    attemptTimeoutMs: r.attemptTimeout(),
    allowPrivateDestinations: r.bool("ALLOW_PRIVATE_DESTINATIONS", false),
    egressProxyUrl: r.string("EGRESS_PROXY_URL")
      ? new URL(r.url("EGRESS_PROXY_URL", "http://proxy.invalid", ["http:"]))
      : null,
    egressNoProxy: r.string("EGRESS_NO_PROXY", ""),
    userAgent: r.string("USER_AGENT", "Herald-Webhooks/1.0"),
    ...r.health(8082),
  };
  r.logLevel();
  r.done();
  return config;
}
