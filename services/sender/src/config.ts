import { parseEncryptionKey } from "@herald/db";
import { ConfigReader, type Env } from "@herald/runtime";

export type SenderConfig = {
  amqpUrl: string;
  amqpPrefix: string;
  encryptionKey: Buffer;
  concurrency: number;
  attemptTimeoutMs: number;
  allowPrivateDestinations: boolean;
  userAgent: string;
  healthPort: number;
  healthHost: string;
};

export function loadConfig(env: Env = process.env): SenderConfig {
  const r = new ConfigReader(env);
  const rawKey = r.required(
    "ENCRYPTION_KEY",
    "the same key the api-gateway uses: endpoint secrets arrive sealed with it",
  );
  const encryptionKey = rawKey ? parseEncryptionKey(rawKey) : null;
  if (rawKey) r.check(encryptionKey !== null, "ENCRYPTION_KEY must be 32 bytes, base64 or hex encoded");
  const config: SenderConfig = {
    ...r.broker(),
    encryptionKey: encryptionKey ?? Buffer.alloc(32),
    concurrency: r.int("SENDER_CONCURRENCY", 64, { min: 1, max: 10_000 }),
    attemptTimeoutMs: r.duration("ATTEMPT_TIMEOUT", 15_000),
    allowPrivateDestinations: r.bool("ALLOW_PRIVATE_DESTINATIONS", false),
    userAgent: r.string("USER_AGENT", "Herald-Webhooks/1.0"),
    ...r.health(8082),
  };
  r.done();
  return config;
}
