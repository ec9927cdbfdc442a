import type { RelayClient } from "@herald/broker";
import {
  type AttemptCompletedV1,
  type AttemptRequestedV1,
  type EndpointAuth,
  type ErrorKind,
  redactHeaders,
} from "@herald/contracts";
import { type DestinationType, destinationType, LISTEN_SCHEME } from "@herald/contracts/destinations";
import {
  endpointAuthContext,
  endpointHeadersContext,
  endpointSecretContext,
  type SecretBox,
} from "@herald/db/secrets";
import { deadline, inSpan, SpanKind, SpanStatusCode } from "@herald/runtime";
import { blockedLiteral } from "./destinations.ts";
import type { EgressAgents } from "./egress.ts";
import { errorKind } from "./errorKind.ts";
import { authenticated, type Outgoing, relayed } from "./httpRequest.ts";
import { publish, type Transports } from "./publish.ts";
import { signatureHeader } from "./sign.ts";
import { type TokenCache, TokenError } from "./tokens.ts";
import { recordedBody, type Transforms, transformAttempt } from "./transformation.ts";

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
  /** Runs endpoints' transformations (transformation.ts); without it, an attempt with one fails. */
  transforms?: Transforms;
};

export type Outcome = Omit<
  AttemptCompletedV1,
  "attempt_id" | "delivery_id" | "endpoint_id" | "trace_id" | "completed_at"
>;

/** Retry-After as seconds or an HTTP date, in milliseconds; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

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

/**
 * Makes one attempt: runs the endpoint's transformation if it has one, signs the body to send,
 * sends it, and reports what happened. Never throws, but for a transformation pool shut down.
 */
export async function deliver(request: AttemptRequestedV1, options: DeliverOptions): Promise<Outcome> {
  // One deadline for a transformation's run, token fetches and the request: only where they
  // are (got's own timeout bounds a plain request).
  const limit = request.transformation || request.sealed_auth ? deadline(timeoutOf(request, options)) : null;
  try {
    return await attempt(request, options, limit?.signal);
  } finally {
    limit?.clear();
  }
}

async function attempt(
  request: AttemptRequestedV1,
  options: DeliverOptions,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
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
  // The endpoint's own headers are write-only: recorded with the outcome as names, each value
  // redacted (and any credential-like one of Herald's), so no token is kept with each attempt.
  const custom: Record<string, string> = request.sealed_headers
    ? JSON.parse(options.secrets.open(request.sealed_headers, endpointHeadersContext(request.endpoint_id)))
    : request.headers;
  const auth: EndpointAuth = request.sealed_auth
    ? JSON.parse(options.secrets.open(request.sealed_auth, endpointAuthContext(request.endpoint_id)))
    : {};
  const type = destinationType(url);
  if (type && options.destinationTypes && !options.destinationTypes.includes(type))
    return {
      ...failed("blocked_destination"),
      response_body: `${type} endpoints are turned off (DESTINATION_TYPES)`,
    };
  let out: Outgoing = {
    method: "POST",
    url,
    headers: custom,
    body: request.payload,
    ...(signal ? { signal } : {}),
  };
  let transformed: Pick<Outcome, "request_method" | "request_url" | "request_body"> = {};
  if (request.transformation) {
    // What it may not return (refusal) fails it there: an OAuth2 endpoint's token stays on its origin.
    const made = await transformAttempt(
      options.transforms,
      request,
      custom,
      Boolean(auth.oauth2),
      timestamp * 1000,
      signal ?? AbortSignal.abort(),
    );
    const duration_ms = () => Math.round(performance.now() - started);
    if ("outcome" in made) return { ...made.outcome, duration_ms: duration_ms() };
    out = { ...made.request, ...(signal ? { signal } : {}) };
    const body = recordedBody(out.body);
    transformed =
      type && type !== "http"
        ? { request_body: body }
        : { request_method: out.method, request_url: out.url.href, request_body: body };
    // A changed URL passes the destination check as the endpoint's own did.
    if (!options.allowPrivate && blockedLiteral(out.url))
      return { ...failed("blocked_destination"), ...transformed };
  }
  const secrets = request.secrets.map((s) =>
    options.secrets.open(s, endpointSecretContext(request.endpoint_id)),
  );
  // What is signed is the body sent: a transformation's, when it made one.
  const headers: Record<string, string> = {
    ...out.headers,
    "content-type": (request.transformation && out.headers["content-type"]) || "application/json",
    "user-agent": options.userAgent,
    "webhook-id": request.event_id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(secrets, request.event_id, timestamp, out.body),
  };
  // Every header a transformation returned is recorded redacted, as the endpoint's own are:
  // it may have copied one of those, or a token of its own, into another name.
  const hidden = Object.keys(out.headers);
  out = { ...out, headers };
  if (type && type !== "http") {
    const outcome = await published(out, request, auth, options, started);
    return { ...outcome, ...transformed, request_headers: redactHeaders(headers, hidden) };
  }
  // The outgoing call as a CLIENT span with the HTTP semantic conventions. No header or body is
  // recorded, and url.full is scrubbed of what may be a customer's token (spanUrl).
  const attributes = {
    "http.request.method": out.method,
    "url.full": spanUrl(out.url),
    "server.address": out.url.hostname,
    "server.port": Number(out.url.port) || (out.url.protocol === "https:" ? 443 : 80),
    "herald.event_id": request.event_id,
    "herald.endpoint_id": request.endpoint_id,
    "herald.app_id": request.app_id,
    "herald.attempt_number": request.attempt_number,
    "herald.transformed": Boolean(request.transformation),
  };
  return inSpan(out.method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const outcome: Outcome = {
      ...(await call(out, request, options, started, auth)),
      ...transformed,
      // After the call: an OAuth2 token's header is recorded too (redacted).
      request_headers: redactHeaders(headers, hidden),
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

/** The attempt's time: the dispatcher's timeout, which its sweeper's deadline is known to exceed, capped by ours. */
const timeoutOf = (request: AttemptRequestedV1, options: DeliverOptions) =>
  Math.min(request.timeout_ms ?? options.timeoutMs, options.timeoutMs);

/** An attempt to a queue, stream, topic or bucket (publish.ts), recorded as an HTTP one is. */
async function published(
  out: Outgoing,
  request: AttemptRequestedV1,
  auth: EndpointAuth,
  options: DeliverOptions,
  started: number,
): Promise<Outcome> {
  if (!options.transports) return failure("invalid_url", started);
  // What a transformation took of the attempt's time is not the destination's.
  const timeoutMs = Math.max(1, timeoutOf(request, options) - Math.round(performance.now() - started));
  const result = await publish(
    out.url,
    { ...request, payload: out.body },
    out.headers,
    auth.url_credentials ?? null,
    { transports: options.transports, timeoutMs, allowPrivate: options.allowPrivate },
    timeoutMs,
  );
  return {
    ...result,
    response_status: null,
    duration_ms: Math.round(performance.now() - started),
    retry_after_ms: null,
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
  out: Outgoing,
  request: AttemptRequestedV1,
  options: DeliverOptions,
  started: number,
  auth: EndpointAuth,
): Promise<Outcome> {
  try {
    const timeoutMs = timeoutOf(request, options);
    const res =
      out.url.protocol === LISTEN_SCHEME
        ? await relayed(out, request.endpoint_id, options, timeoutMs)
        : await authenticated(out, request, options, timeoutMs, auth);
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
