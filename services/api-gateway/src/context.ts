import type { Broker } from "@herald/broker";
import type { Pool, PrismaClient, SecretBox } from "@herald/db";
import type { DatabaseOutage } from "@herald/db/outage";
import type { Logger } from "@herald/runtime";
import type { TransformPool } from "@herald/transform";
import type { Request } from "express";
import type { AuditBy, AuditTarget, AuditTx } from "./audit/record.ts";
import type { Caches } from "./cache.ts";
import type { GatewayConfig } from "./config.ts";
import type { EventWriter } from "./eventWriter.ts";
import type { Placeholders } from "./http/idempotency.ts";
import type { RateLimiter } from "./http/rateLimit.ts";
import type { OutboxRelay } from "./outboxRelay.ts";
import type { SchemaPool } from "./schemas/pool.ts";

/** What a route handler may use. Handlers take what they need from here and nothing else. */
export type Deps = {
  config: GatewayConfig;
  prisma: PrismaClient;
  /** pg for the hot path of accepting events. */
  pool: Pool;
  caches: Caches;
  events: EventWriter;
  broker: Broker;
  outbox: OutboxRelay;
  secrets: SecretBox;
  schemas: SchemaPool;
  /** Endpoints' transformations: compiled when saved, run by the try-it routes. */
  transforms: TransformPool;
  /**
   * TRANSFORMATION_RATE_LIMIT_PER_SECOND: the compiles and try-its each account (its portal
   * sessions' included) and each portal session may ask of `transforms` (transformationBuckets),
   * besides its rate of requests.
   */
  transformLimiter: RateLimiter;
  logger: Logger;
  /** The database's outages, logged once each; a failure it explains is a 503, not a 500. */
  dbOutage: DatabaseOutage;
  /** Idempotency-Key placeholders whose settling waits for the database. */
  placeholders: Placeholders;
};

/**
 * Who is calling: an API key's account, or a browser session's. A key and a dashboard session
 * hold `scopes`; a key may be confined to one app (`appId`). A portal session is limited to one
 * app (`appId`) and to the routes the portal shows; a read-only one to reads.
 */
export type Account = {
  id: string;
  keyId: string;
  via: "key" | "portal" | "dashboard";
  /** What a key or a dashboard session may do (`@herald/contracts/scopes`). */
  scopes?: readonly string[];
  appId?: string;
  /** When the key stops working, if it does. */
  expiresAt?: Date;
  /** The person a dashboard session signed in by single sign-on is. */
  person?: { email: string };
  readOnly?: boolean;
  /** A browser session's own id, its end, and the API key it came from. */
  session?: { id: string; expiresAt: Date; keyId: string | null };
};

export type Ctx<P = Record<string, string>, Q = Record<string, unknown>, B = Record<string, unknown>> = {
  account: Account;
  params: P;
  query: Q;
  body: B;
  deps: Deps;
  req: Request;
  /**
   * Records the route's `audit` action on `target` in the audit log, by the caller, with the
   * names of the body's fields: call it in the transaction of the change (audit/record.ts).
   * `by`: the account and actor, where the route's caller is not authenticated (opening a
   * session, signing in).
   */
  audit(tx: AuditTx, target: AuditTarget, by?: AuditBy): Promise<void>;
};

export type Reply = { status?: number; body: unknown; headers?: Record<string, string> };
