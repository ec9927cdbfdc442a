import { EVENTS_PER_MESSAGE } from "@herald/contracts";
import {
  DESTINATION_TYPES,
  type DestinationType,
  destinationTypesFrom,
} from "@herald/contracts/destinations";
import { ConfigReader, type Env } from "@herald/runtime";
import { API_KEY_FORMAT } from "./http/auth.ts";
import { DEFAULT_WEB_DIST } from "./pages.ts";
import { type SsoConfig, ssoConfig } from "./sso/config.ts";

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
  /** Each portal session's own limit, apart from its account's. */
  portalRateLimitPerSecond: number;
  /**
   * Transformations an account (each portal session apart) may compile, saving an endpoint, or
   * try, a second: each costs a QuickJS compile of up to 64 KiB on the transformation workers.
   */
  transformationRateLimitPerSecond: number;
  /** Endpoints one app may have: fan-out writes events × endpoints in one statement. */
  endpointsPerAppMax: number;
  /** `herald listen` sockets one account may have open at once, across the gateways. */
  listenMaxPerAccount: number;
  /** Where browsers reach this gateway: the base of portal and dashboard links. */
  publicUrl: string;
  /**
   * TRUST_PROXY: how many proxies in front of the gateway (a load balancer, an ingress) add
   * `X-Forwarded-For`, so the audit log records the client's address and not theirs; 0 (the
   * default): none, the connection's own address.
   */
  trustProxy: number;
  /** Single sign-on to the dashboard (OIDC_*); null: off. */
  sso: SsoConfig | null;
  /** TRANSFORMATION_*: how endpoints' transformations are compiled on save and tried. */
  transformations: { workers: number; timeoutMs: number; memoryBytes: number };
  /** DESTINATION_TYPES: the endpoint types accepted; others are a 400 at `url`. */
  destinationTypes: DestinationType[];
  /** The built portal and dashboard (packages/web/dist). */
  webDist: string;
  outboxRelayIntervalMs: number;
  outboxRelayAfterMs: number;
  /** Accepted events published per message at most; 1 publishes `event.created.v1`, one each. */
  eventsPerMessage: number;
  /** Customers' schemas: checked and compiled on worker threads, each within a time and heap. */
  schemaWorkers: number;
  schemaCompileTimeoutMs: number;
  schemaValidateTimeoutMs: number;
  schemaWorkerHeapMb: number;
};

/** Every variable the gateway reads; `.env.example` and docs/configuration.md list the same. */
export function loadConfig(env: Env = process.env): GatewayConfig {
  const r = new ConfigReader(env);
  const adminToken = r.string("ADMIN_TOKEN");
  r.check(adminToken === undefined || adminToken.length >= 16, "ADMIN_TOKEN must be at least 16 characters");
  const bootstrapApiKey = r.string("BOOTSTRAP_API_KEY");
  r.check(
    bootstrapApiKey === undefined || API_KEY_FORMAT.test(bootstrapApiKey),
    "BOOTSTRAP_API_KEY must look like hk_ followed by 20 to 200 of A-Z a-z 0-9 _ -",
  );
  const destinations = destinationTypesFrom(r.string("DESTINATION_TYPES", ""));
  r.check(
    !destinations.unknown.length,
    `DESTINATION_TYPES has types Herald does not know: ${destinations.unknown.join(", ")} (it knows ${DESTINATION_TYPES.join(", ")})`,
  );
  const config: GatewayConfig = {
    destinationTypes: destinations.types,
    transformations: r.transformations(),
    port: r.int("PORT", 8080, { max: 65535 }),
    host: r.string("HOST", "0.0.0.0"),
    ...r.database(),
    ...r.broker(),
    adminToken,
    encryptionKey: r.encryptionKey("32 bytes, base64 or hex: `openssl rand -base64 32`"),
    bootstrapApiKey,
    rateLimitPerSecond: r.int("RATE_LIMIT_PER_SECOND", 10_000),
    portalRateLimitPerSecond: r.int("PORTAL_RATE_LIMIT_PER_SECOND", 20),
    // 5 a second (bursts of 10): an editor's saves and try-its, and a script making endpoints.
    transformationRateLimitPerSecond: r.int("TRANSFORMATION_RATE_LIMIT_PER_SECOND", 5),
    endpointsPerAppMax: r.int("ENDPOINTS_PER_APP_MAX", 100, { min: 1, max: 10_000 }),
    listenMaxPerAccount: r.int("LISTEN_MAX_PER_ACCOUNT", 10, { min: 0, max: 1000 }),
    publicUrl: r
      .url("PUBLIC_URL", `http://localhost:${env.PORT || 8080}`, ["http:", "https:"])
      .replace(/\/+$/, ""),
    trustProxy: r.int("TRUST_PROXY", 0, { min: 0, max: 10 }),
    sso: ssoConfig(r),
    webDist: r.string("WEB_DIST", DEFAULT_WEB_DIST),
    outboxRelayIntervalMs: r.duration("OUTBOX_RELAY_INTERVAL", 1000),
    // 5 s: far past an inline publish's confirm (milliseconds), so the relay rarely doubles one.
    outboxRelayAfterMs: r.duration("OUTBOX_RELAY_AFTER", 5000),
    // 1 while dispatchers older than `events.created.v1` still run (an upgrade's rollout).
    eventsPerMessage: r.int("EVENTS_PER_MESSAGE", EVENTS_PER_MESSAGE, { min: 1, max: EVENTS_PER_MESSAGE }),
    schemaWorkers: r.int("SCHEMA_WORKERS", 2, { min: 1, max: 16 }),
    schemaCompileTimeoutMs: r.duration("SCHEMA_COMPILE_TIMEOUT", 2000),
    schemaValidateTimeoutMs: r.duration("SCHEMA_VALIDATE_TIMEOUT", 500),
    schemaWorkerHeapMb: r.int("SCHEMA_WORKER_HEAP_MB", 64, { min: 16, max: 4096 }),
  };
  r.check(config.schemaCompileTimeoutMs >= 10, "SCHEMA_COMPILE_TIMEOUT must be at least 10ms");
  r.check(config.schemaValidateTimeoutMs >= 10, "SCHEMA_VALIDATE_TIMEOUT must be at least 10ms");
  r.logLevel();
  r.done();
  return config;
}
