import type { IncomingHttpHeaders } from "node:http";
import type { RelayClient } from "@herald/broker";
import {
  type AttemptCompletedV1,
  type AttemptRequestedV1,
  type EndpointAuth,
  type ErrorKind,
  redactHeaders,
} from "@herald/contracts";
import { type DestinationType, destinationType } from "@herald/contracts/destinations";
import {
  endpointAuthContext,
  endpointHeadersContext,
  endpointSecretContext,
  type SecretBox,
} from "@herald/db/secrets";
import { inSpan, SpanKind, SpanStatusCode } from "@herald/runtime";
import got, { type Got } from "got";
import { blockedLiteral, guardedLookup } from "./destinations.ts";
import type { EgressAgents } from "./egress.ts";
import { errorKind } from "./errorKind.ts";
import { publish, type Transports } from "./publish.ts";
import { readBounded } from "./readBounded.ts";
import { signatureHeader } from "./sign.ts";
import { type TokenCache, TokenError } from "./tokens.ts";

/** The first 4 KiB of a response body are kept: enough to read an error page, bounded in size. */
export const BODY_LIMIT = 4096;

export type DeliverOptions = {
  secrets: SecretBox;
  /** The agents, by the attempt's timeout (egress.ts). */
  agents: EgressAgents;
  /** The longest an attempt may take here (ATTEMPT_TIMEOUT); a request may ask for less. */
  timeoutMs: number;
  allowPrivate: boolean;
  userAgent: string;
  /** Attempts to `herald listen` endpoints go through it (LISTEN_SCHEME), never over HTTP. */
  relay?: Pick<RelayClient, "call">;
  /** OAuth2 tokens of endpoints that want them, kept across attempts (tokens.ts). */
  tokens?: TokenCache;
  /** The clients of destinations beyond HTTP, by type (transports/). */
  transports?: Transports;
  /** DESTINATION_TYPES: an attempt to another type fails as `blocked_destination`; unset, all. */
  destinationTypes?: readonly DestinationType[];
};

/** The URL scheme of a `herald listen` endpoint: `herald-listen://<endpoint id>`, made by the gateway only. */
export const LISTEN_SCHEME = "herald-listen:";

export type Outcome = Omit<
  AttemptCompletedV1,
  "attempt_id" | "delivery_id" | "endpoint_id" | "trace_id" | "completed_at"
>;

type Raw = { statusCode: number; headers: IncomingHttpHeaders; body: string };

/** Retry-After as seconds or an HTTP date, in milliseconds; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * One got instance per sender and timeout, its defaults merged once: merging options on every
 * request showed in the sender's profile (about 7 % of its CPU). Timeouts are few (the
 * dispatchers' ATTEMPT_TIMEOUT), so are the instances.
 */
const clients = new WeakMap<DeliverOptions, Map<number, Got>>();

function clientFor(options: DeliverOptions, timeoutMs: number): Got {
  let byTimeout = clients.get(options);
  if (!byTimeout) {
    byTimeout = new Map();
    clients.set(options, byTimeout);
  }
  let client = byTimeout.get(timeoutMs);
  if (!client) {
    client = got.extend({
      timeout: { request: timeoutMs },
      // A 3xx is a failure: following it could lead anywhere, a private address included.
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      agent: options.agents.of(timeoutMs),
      ...(options.allowPrivate ? {} : { dnsLookup: guardedLookup as never }),
    });
    byTimeout.set(timeoutMs, client);
  }
  return client;
}

/** Per request: the endpoint's TLS client certificate and trusted CA, and the attempt's deadline. */
type RequestExtras = { tls?: EndpointAuth["tls"]; signal?: AbortSignal };

function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: DeliverOptions,
  timeoutMs: number,
  extras: RequestExtras = {},
): Promise<Raw> {
  const tls = extras.tls;
  const stream = clientFor(options, timeoutMs).stream(url, {
    method: "POST",
    body,
    headers,
    // The agent keeps connections apart by these: one endpoint's certificate is never another's.
    ...(tls?.certificate || tls?.ca
      ? { https: { certificate: tls.certificate, key: tls.key, certificateAuthority: tls.ca } }
      : {}),
    ...(extras.signal ? { signal: extras.signal } : {}),
  });
  return readBounded(stream, BODY_LIMIT);
}

/**
 * An attempt to a `herald listen` endpoint: the same signed request, through the listen relay
 * to the gateway holding the CLI's socket; its local server's answer comes back as a response.
 */
async function relayed(
  url: URL,
  endpointId: string,
  headers: Record<string, string>,
  body: string,
  options: DeliverOptions,
  timeoutMs: number,
): Promise<Raw> {
  if (!options.relay) throw Object.assign(new Error("no listen relay here"), { code: "ECONNREFUSED" });
  // Only the endpoint's own socket: a listen URL naming another endpoint is never followed.
  if (url.hostname !== endpointId)
    throw Object.assign(new Error("listen URL of another endpoint"), { code: "HERALD_BLOCKED_DESTINATION" });
  const res = await options.relay.call(url.hostname, { headers, body }, timeoutMs);
  const lower = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { statusCode: res.status, headers: lower, body: res.body.slice(0, BODY_LIMIT) };
}

/** Makes one attempt: signs, POSTs, and reports what happened. Never throws. */
function failure(error: ErrorKind, started: number): Outcome {
  return {
    succeeded: false,
    response_status: null,
    response_body: null,
    error,
    duration_ms: Math.round(performance.now() - started),
    retry_after_ms: null,
  };
}

export async function deliver(request: AttemptRequestedV1, options: DeliverOptions): Promise<Outcome> {
  const started = performance.now();
  const failed = (error: ErrorKind) => failure(error, started);
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return failed("invalid_url");
  }
  if (!options.allowPrivate && blockedLiteral(url)) return failed("blocked_destination");
  const timestamp = Math.floor(Date.now() / 1000);
  const secrets = request.secrets.map((s) =>
    options.secrets.open(s, endpointSecretContext(request.endpoint_id)),
  );
  // The endpoint's own headers are write-only: recorded with the outcome as names, each value
  // redacted (and any credential-like one of Herald's), so no token is kept with each attempt.
  const custom: Record<string, string> = request.sealed_headers
    ? JSON.parse(options.secrets.open(request.sealed_headers, endpointHeadersContext(request.endpoint_id)))
    : request.headers;
  const auth: EndpointAuth = request.sealed_auth
    ? JSON.parse(options.secrets.open(request.sealed_auth, endpointAuthContext(request.endpoint_id)))
    : {};
  const headers: Record<string, string> = {
    ...custom,
    "content-type": "application/json",
    "user-agent": options.userAgent,
    "webhook-id": request.event_id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(secrets, request.event_id, timestamp, request.payload),
  };
  const type = destinationType(url);
  if (type && options.destinationTypes && !options.destinationTypes.includes(type))
    return {
      ...failed("blocked_destination"),
      response_body: `${type} endpoints are turned off (DESTINATION_TYPES)`,
    };
  if (type && type !== "http") return published(url, request, headers, custom, auth, options, started);
  // The outgoing call as a CLIENT span with the HTTP semantic conventions. No header or body is
  // recorded, and url.full is scrubbed of what may be a customer's token (spanUrl).
  const attributes = {
    "http.request.method": "POST",
    "url.full": spanUrl(url),
    "server.address": url.hostname,
    "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80),
    "herald.event_id": request.event_id,
    "herald.endpoint_id": request.endpoint_id,
    "herald.app_id": request.app_id,
    "herald.attempt_number": request.attempt_number,
  };
  return inSpan("POST", { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const outcome: Outcome = {
      ...(await call(url, headers, request, options, started, auth)),
      request_headers: redactHeaders(headers, Object.keys(custom)),
    };
    if (outcome.response_status !== null)
      span.setAttribute("http.response.status_code", outcome.response_status);
    if (outcome.error) {
      span.setAttribute(
        "error.type",
        outcome.response_status ? String(outcome.response_status) : outcome.error,
      );
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    }
    return outcome;
  });
}

/** An attempt to a queue, stream, topic or bucket (publish.ts), recorded as an HTTP one is. */
async function published(
  url: URL,
  request: AttemptRequestedV1,
  headers: Record<string, string>,
  custom: Record<string, string>,
  auth: EndpointAuth,
  options: DeliverOptions,
  started: number,
): Promise<Outcome> {
  if (!options.transports) return failure("invalid_url", started);
  const timeoutMs = Math.min(request.timeout_ms ?? options.timeoutMs, options.timeoutMs);
  const result = await publish(
    url,
    request,
    headers,
    auth.url_credentials ?? null,
    { transports: options.transports, timeoutMs, allowPrivate: options.allowPrivate },
    timeoutMs,
  );
  return {
    ...result,
    response_status: null,
    duration_ms: Math.round(performance.now() - started),
    retry_after_ms: null,
    request_headers: redactHeaders(headers, Object.keys(custom)),
  };
}

/**
 * An endpoint's URL as traces show it. Tokens ride in URLs: in the query, in user info, and in
 * the path (Slack's /services/T…/B…/<token>, Discord's /api/webhooks/<id>/<token>). The query
 * and user info are dropped; a path segment that could be a token (8 characters or more with a
 * digit, or 16 or more of any kind) becomes `{redacted}`, words such as `webhooks` stay.
 */
export function spanUrl(url: URL): string {
  const path = url.pathname
    .split("/")
    .map((segment) =>
      (segment.length >= 8 && /\d/.test(segment)) || segment.length >= 16 ? "{redacted}" : segment,
    )
    .join("/");
  return `${url.protocol}//${url.host}${path}`;
}

async function call(
  url: URL,
  headers: Record<string, string>,
  request: AttemptRequestedV1,
  options: DeliverOptions,
  started: number,
  auth: EndpointAuth,
): Promise<Outcome> {
  try {
    // The dispatcher's timeout, which its sweeper's deadline is known to exceed, capped by ours.
    const timeoutMs = Math.min(request.timeout_ms ?? options.timeoutMs, options.timeoutMs);
    const res =
      url.protocol === LISTEN_SCHEME
        ? await relayed(url, request.endpoint_id, headers, request.payload, options, timeoutMs)
        : await authenticated(url, headers, request, options, timeoutMs, auth);
    const succeeded = res.statusCode >= 200 && res.statusCode < 300;
    const retryAfter =
      res.statusCode === 429 || res.statusCode === 503 ? res.headers["retry-after"] : undefined;
    return {
      succeeded,
      response_status: res.statusCode,
      response_body: res.body,
      error: succeeded ? null : "http_error",
      duration_ms: Math.round(performance.now() - started),
      retry_after_ms: parseRetryAfter(retryAfter),
    };
  } catch (err) {
    // What the token endpoint said is the attempt's response body: the reason to read.
    if (err instanceof TokenError) return { ...failure(err.kind, started), response_body: err.message };
    return failure(errorKind(err), started);
  }
}

/**
 * The POST, with the endpoint's client certificate and, for OAuth2, its bearer token: on a 401
 * a new token is fetched and the request made once more. Token fetches and requests together
 * take no longer than the attempt may (one deadline for all).
 */
async function authenticated(
  url: URL,
  headers: Record<string, string>,
  request: AttemptRequestedV1,
  options: DeliverOptions,
  timeoutMs: number,
  auth: EndpointAuth,
): Promise<Raw> {
  const oauth2 = auth.oauth2;
  if (!oauth2 || !options.tokens) return post(url, headers, request.payload, options, timeoutMs, auth);
  const tokens = options.tokens;
  const extras = { tls: auth.tls, signal: AbortSignal.timeout(timeoutMs) };
  const client = clientFor(options, timeoutMs);
  const withToken = async (fresh: boolean) => {
    const token = await tokens.token(
      request.endpoint_id,
      oauth2,
      client,
      options.allowPrivate,
      fresh,
      extras.signal,
    );
    headers.authorization = `Bearer ${token}`;
    return post(url, headers, request.payload, options, timeoutMs, extras);
  };
  const first = await withToken(false);
  return first.statusCode === 401 ? withToken(true) : first;
}
