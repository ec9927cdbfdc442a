import { randomBytes } from "node:crypto";
import {
  DestinationError,
  type DestinationType,
  destinationType,
  parseTarget,
  REDACTED,
  redactUserInfo,
  SCHEMES,
  userInfo,
} from "@herald/contracts/destinations";
import { compileFilter, FilterError } from "@herald/contracts/filter";
import { Prisma, type PrismaClient } from "@herald/db";
import { invalid } from "../../http/errors.ts";
import type { Schema } from "../../http/route.ts";
import { limitFields } from "./state.ts";
import { transformationField } from "./transformation.ts";

/**
 * Endpoint inputs that need more than a JSON schema: the URL, the signing secret, the event
 * type filter (every name must exist) and custom headers (a few are Herald's own).
 */
export const URL_MAX = 2048;

export function checkUrl(value: string, param = "url"): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(param, `url must be an absolute http or https URL; got '${value}'.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalid(param, `url must use http or https; got '${url.protocol}'.`);
  if (url.username || url.password)
    throw invalid(param, "url must not contain credentials; send them in headers instead.");
  return url.toString();
}

/** What a URL's user info asks for: credentials to save, none, or those saved kept (`[redacted]`). */
export type UrlCredentials = { username: string; password: string } | null | "kept";

const SCHEME_LIST = Object.keys(SCHEMES)
  .map((s) => s.slice(0, -1))
  .join(", ");

/**
 * An endpoint's URL: an http(s) webhook, or a destination whose scheme names its type (amqp,
 * nats, redis, mqtt, s3), checked by that type's grammar. A destination's user info is its
 * credentials: returned apart, and the URL saved with `[redacted]` in its place. A URL sent
 * back as shown (`[redacted]` as its user info) keeps the saved credentials.
 */
export function checkEndpointUrl(
  value: string,
  allowed: readonly DestinationType[],
  param = "url",
): { url: string; credentials: UrlCredentials } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(
      param,
      `url must be an absolute URL (http, https, or a destination: ${SCHEME_LIST}); got '${value}'.`,
    );
  }
  const type = destinationType(url);
  if (!type) throw invalid(param, `url must use one of ${SCHEME_LIST}; got '${url.protocol}'.`);
  if (!allowed.includes(type))
    throw invalid(
      param,
      `This installation does not deliver to ${type} endpoints (DESTINATION_TYPES: ${allowed.join(", ")}).`,
    );
  if (type === "http") return { url: checkUrl(value, param), credentials: null };
  try {
    parseTarget(url);
  } catch (err) {
    if (err instanceof DestinationError) throw invalid(param, err.message);
    throw err;
  }
  const info = userInfo(url);
  const kept = info?.username === REDACTED && !info.password;
  return { url: redactUserInfo(url), credentials: kept ? "kept" : info };
}

/** Standard Webhooks secrets: `whsec_` and base64 of 24 to 64 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export function checkSecret(value: string, param = "secret"): string {
  const body = value.startsWith("whsec_") ? value.slice(6) : null;
  const bytes = body && /^[A-Za-z0-9+/]+={0,2}$/.test(body) ? Buffer.from(body, "base64") : null;
  if (!bytes || bytes.length < 24 || bytes.length > 64) {
    throw invalid(param, "secret must be 'whsec_' followed by the base64 of 24 to 64 random bytes.");
  }
  return value;
}

/**
 * A `herald listen` endpoint (its `listenUntil` set) is the CLI's while its socket is open: it is
 * deleted, never changed. A new URL or secret would break the socket it belongs to.
 */
export function checkNotListening(found: { listenUntil: Date | null }): void {
  if (found.listenUntil)
    throw invalid(
      undefined,
      "This endpoint belongs to a `herald listen` session: it cannot be changed, only deleted, and goes away when the CLI exits.",
      "listen_endpoint",
    );
}

/** Set by Herald on every request, so an endpoint's own headers cannot replace them. */
export const RESERVED_HEADERS = new Set([
  "connection",
  "content-length",
  "content-type",
  "host",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "webhook-id",
  "webhook-signature",
  "webhook-timestamp",
]);

const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

export function checkHeaders(headers: Record<string, string>, param = "headers"): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    const at = `${param}[${name}]`;
    if (!TOKEN.test(name)) throw invalid(at, `'${name}' is not a valid header name.`);
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      throw invalid(at, `'${name}' is set by Herald and cannot be overridden.`);
    if (/[\r\n\0]/.test(value)) throw invalid(at, "header values must not contain line breaks.");
  }
  return headers;
}

export async function checkEventTypes(
  prisma: Pick<PrismaClient, "eventType">,
  accountId: string,
  names: string[],
  param = "event_types",
): Promise<string[]> {
  const unique = [...new Set(names)];
  const found = new Set(
    (
      await prisma.eventType.findMany({ where: { accountId, name: { in: unique } }, select: { name: true } })
    ).map((t) => t.name),
  );
  const index = names.findIndex((n) => !found.has(n));
  if (index >= 0) throw invalid(`${param}[${index}]`, `No event type named '${names[index]}'.`);
  return unique;
}

export const filterField: Schema = {
  type: ["object", "null"],
  description:
    'Only events this MongoDB-style query matches, over `id`, `type`, `app` and `data` by dotted path: `{"type": "order.created", "data.amount": {"$gte": 100}}`. Operators: `$eq`, `$ne`, `$in`, `$nin`, `$gt`, `$gte`, `$lt`, `$lte`, `$exists`, `$not`, `$and`, `$or`; a key on an array looks into each item, a number picks one; an absent path counts as `null`; `app` is the app id. At most 4096 characters, 6 levels, 64 conditions and 16 keys a path. `null`: every event its `event_types` take. In a form body, a JSON string. `POST /v3/events/dry-run` says which endpoints an event would reach, and why not.',
};

/** A filter checked (its faults named, `400`), or null to remove it. */
export function checkFilter(
  filter: Record<string, unknown> | null,
): Prisma.InputJsonValue | typeof Prisma.DbNull {
  if (filter === null) return Prisma.DbNull;
  try {
    compileFilter(filter);
  } catch (err) {
    if (err instanceof FilterError) throw invalid(err.param, err.message, "filter_invalid");
    throw err;
  }
  return filter as Prisma.InputJsonValue;
}

export const endpointFields: Record<string, Schema> = {
  url: {
    type: "string",
    minLength: 1,
    maxLength: URL_MAX,
    description:
      "Where events go. An http or https URL: each is POSTed there. Or a destination, whose scheme names its type, each event published there with the same body and Standard Webhooks headers: `amqp://` / `amqps://` (`?exchange=X&routing_key=K`, vhost as the path), `nats://` / `tls://` (`?subject=S`, JetStream when a stream takes the subject), `redis://` / `rediss://` (`/db?stream=S&maxlen=N`), `mqtt://` / `mqtts://` (`?topic=T&qos=1`), `s3://bucket/prefix` (`?endpoint=URL&region=R`, one object per event). A destination's user info (`user:password@`; for S3 the access key id and secret) is write-only: sealed at rest and shown as `[redacted]`. Sent back as `[redacted]`, it keeps the saved credentials on the same destination only. Every host must pass the destination check (no private addresses).",
  },
  description: { type: "string", maxLength: 4096 },
  event_types: {
    type: "array",
    maxItems: 256,
    items: { type: "string", minLength: 1, maxLength: 64 },
    description:
      "Event type names this endpoint receives; empty means all. In a form body: `event_types[]=a&event_types[]=b`.",
  },
  headers: {
    type: "object",
    maxProperties: 20,
    additionalProperties: { type: "string", maxLength: 4096 },
    description:
      "Extra request headers, as a map. In a form body: `headers[X-Foo]=bar`. Write-only, like the signing secret: values are sealed at rest and in messages, and shown (on the endpoint and in attempts' recorded requests) as `[redacted]`. In an update, a value of exactly `[redacted]` keeps the one saved.",
  },
  disabled: { type: "boolean", description: "A disabled endpoint receives nothing." },
  ...limitFields,
  filter: filterField,
  transformation: transformationField,
};

/**
 * Refuses an app's endpoint past `max`: each event fans out to every endpoint of its app in one
 * statement, so an app's endpoints multiply all its events' work. Counted under a lock on the
 * app's endpoints, so two creates at once cannot both take the last place.
 */
export async function checkEndpointRoom(
  tx: Prisma.TransactionClient,
  appId: string,
  ref: string,
  max: number,
) {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`endpoints:${appId}`}))`;
  const count = await tx.endpoint.count({ where: { appId, deletedAt: null } });
  if (count >= max)
    throw invalid(
      "app",
      `The app '${ref}' has ${count} endpoints, the most one app may have (ENDPOINTS_PER_APP_MAX); delete one first.`,
      "endpoint_limit_reached",
    );
}
