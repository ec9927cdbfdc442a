import { parseEncryptionKey } from "@herald/db";
import { ConfigReader, type Env } from "@herald/runtime";
import { DEFAULT_WEB_DIST } from "./pages.ts";

export type GatewayConfig = {
  port: number;
  host: string;
  databaseUrl: string;
  databasePoolSize: number;
  amqpUrl: string;
  amqpPrefix: string;
  adminToken: string | undefined;
  encryptionKey: Buffer;
  bootstrapApiKey: string | undefined;
  rateLimitPerSecond: number;
  /** Where browsers reach this gateway: the base of portal and dashboard links. */
  publicUrl: string;
  /** The built portal and dashboard (packages/web/dist). */
  webDist: string;
  outboxRelayIntervalMs: number;
  outboxRelayAfterMs: number;
};

/** Every variable the gateway reads; `.env.example` and the README list the same. */
export function loadConfig(env: Env = process.env): GatewayConfig {
  const r = new ConfigReader(env);
  const rawKey = r.required("ENCRYPTION_KEY", "32 bytes, base64 or hex: `openssl rand -base64 32`");
  const encryptionKey = rawKey ? parseEncryptionKey(rawKey) : null;
  if (rawKey) r.check(encryptionKey !== null, "ENCRYPTION_KEY must be 32 bytes, base64 or hex encoded");
  const adminToken = r.string("ADMIN_TOKEN");
  r.check(adminToken === undefined || adminToken.length >= 16, "ADMIN_TOKEN must be at least 16 characters");
  const bootstrapApiKey = r.string("BOOTSTRAP_API_KEY");
  r.check(
    bootstrapApiKey === undefined || /^hk_[A-Za-z0-9_-]{20,200}$/.test(bootstrapApiKey),
    "BOOTSTRAP_API_KEY must look like hk_ followed by 20 to 200 of A-Z a-z 0-9 _ -",
  );
  const config: GatewayConfig = {
    port: r.int("PORT", 8080, { max: 65535 }),
    host: r.string("HOST", "0.0.0.0"),
    ...r.database(),
    ...r.broker(),
    adminToken,
    encryptionKey: encryptionKey ?? Buffer.alloc(32),
    bootstrapApiKey,
    rateLimitPerSecond: r.int("RATE_LIMIT_PER_SECOND", 10_000),
    publicUrl: r
      .url("PUBLIC_URL", `http://localhost:${env.PORT || 8080}`, ["http:", "https:"])
      .replace(/\/+$/, ""),
    webDist: r.string("WEB_DIST", DEFAULT_WEB_DIST),
    outboxRelayIntervalMs: r.duration("OUTBOX_RELAY_INTERVAL", 1000),
    // 5 s: far past an inline publish's confirm (milliseconds), so the relay rarely doubles one.
    outboxRelayAfterMs: r.duration("OUTBOX_RELAY_AFTER", 5000),
  };
  r.done();
  return config;
}
