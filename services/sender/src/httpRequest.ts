import type { IncomingHttpHeaders } from "node:http";
import type { AttemptRequestedV1, EndpointAuth } from "@herald/contracts";
import got, { type Got, type Method } from "got";
import type { DeliverOptions } from "./deliver.ts";
import { guardedLookup } from "./destinations.ts";
import { readBounded } from "./readBounded.ts";

/**
 * An attempt's HTTP request, as deliver.ts makes it: through one got instance per timeout, with
 * the endpoint's client certificate and OAuth2 token, or through the `herald listen` relay.
 */

/** The first 4 KiB of a response body are kept: enough to read an error page, bounded in size. */
export const BODY_LIMIT = 4096;

export type Raw = { statusCode: number; headers: IncomingHttpHeaders; body: string };

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

/**
 * What is sent: Herald's own request (POST of the event's payload to the endpoint's URL, its
 * custom headers), or what the endpoint's transformation made of it.
 */
export type Outgoing = {
  method: Method;
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** Ends the attempt: set when a transformation or a token fetch shares its time (deliver). */
  signal?: AbortSignal;
};

function post(
  out: Outgoing,
  options: DeliverOptions,
  timeoutMs: number,
  extras: RequestExtras = {},
): Promise<Raw> {
  const { url, headers, body } = out;
  const tls = extras.tls;
  const stream = clientFor(options, timeoutMs).stream(url, {
    method: out.method,
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
export async function relayed(
  out: Outgoing,
  endpointId: string,
  options: DeliverOptions,
  timeoutMs: number,
): Promise<Raw> {
  const { url, headers, body } = out;
  if (!options.relay) throw Object.assign(new Error("no listen relay here"), { code: "ECONNREFUSED" });
  // Only the endpoint's own socket: a listen URL naming another endpoint is never followed.
  if (url.hostname !== endpointId)
    throw Object.assign(new Error("listen URL of another endpoint"), { code: "HERALD_BLOCKED_DESTINATION" });
  const res = await options.relay.call(url.hostname, { headers, body }, timeoutMs);
  const lower = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { statusCode: res.status, headers: lower, body: res.body.slice(0, BODY_LIMIT) };
}

/**
 * The request, with the endpoint's client certificate and, for OAuth2, its bearer token: on a
 * 401 a new token is fetched and the request made once more. Token fetches and requests
 * together take no longer than the attempt may (one deadline for all, a transformation's run
 * included).
 */
export async function authenticated(
  out: Outgoing,
  request: AttemptRequestedV1,
  options: DeliverOptions,
  timeoutMs: number,
  auth: EndpointAuth,
): Promise<Raw> {
  const oauth2 = auth.oauth2;
  if (!oauth2 || !options.tokens)
    return post(out, options, timeoutMs, { tls: auth.tls, ...(out.signal ? { signal: out.signal } : {}) });
  const tokens = options.tokens;
  // deliver() gave an attempt with auth a deadline.
  const extras = { tls: auth.tls, signal: out.signal as AbortSignal };
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
    out.headers.authorization = `Bearer ${token}`;
    return post(out, options, timeoutMs, extras);
  };
  const first = await withToken(false);
  return first.statusCode === 401 ? withToken(true) : first;
}
