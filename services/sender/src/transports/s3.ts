import type { IncomingHttpHeaders } from "node:http";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { isIP } from "node:net";
import type { S3Target } from "@herald/contracts/destinations";
import aws4 from "aws4";
import got from "got";
import { readBounded } from "../readBounded.ts";
import { ConnectionPool, connectionKey, untilAborted } from "./pool.ts";
import { type Message, type SendContext, scrub, type Transport, TransportError } from "./types.ts";

/**
 * S3, and S3-compatible servers (MinIO, Ceph, a local one): each delivery is one object, PUT to
 * `<prefix><event id>.json` with the body as it is and the Standard Webhooks headers as user
 * metadata (`x-amz-meta-webhook-signature`, …), signed with AWS Signature V4 when the URL has
 * credentials (access key id as user, secret as password), unsigned without. The event id in
 * the key makes a redelivery overwrite the same object: the bucket holds each event once.
 *
 * A "connection" here is a keep-alive HTTP agent per destination: its sockets go to the
 * address the destination guard resolved, and one that fails or times out is destroyed by the
 * request it carried (Node's agent never hands out a dead socket again), so the next attempt
 * connects afresh while the destination's other sockets stay in use.
 */

/** The sender's agents for attempts of one timeout: egress.ts's `EgressAgents.of`. */
export type AgentsFor = (timeoutMs: number) => { http: HttpAgent; https: HttpsAgent };

export type S3TransportOptions = {
  /** Destinations with a pooled agent at most; default 64. */
  maxConnections?: number;
  /**
   * The sender's egress agents (EGRESS_PROXY_URL, EGRESS_NO_PROXY), for S3 over HTTP to go out
   * the way webhooks do. Without, each destination gets an agent of its own from the pool.
   */
  agent?: AgentsFor;
};

/** What one object's PUT is made of: pure, so the addressing and signing can be tested alone. */
export type ObjectRequest = {
  url: URL;
  headers: Record<string, string>;
  bucket: string;
  key: string;
  tls: boolean;
};

/** Sockets kept per destination; past it, PUTs wait for one (within their deadline). */
const SOCKETS_PER_DESTINATION = 64;
/** 4 s: an idle socket closes before the 5 s keep-alive of Node servers (s3rver) and proxies, so one is not reused as the server closes it. */
const IDLE_MS = 4000;
/** The first 4 KiB of an answer are read: an S3 error document fits, a hostile server's endless body does not. */
const BODY_LIMIT = 4096;

/** RFC 3986 encoding of one path segment, as SigV4 canonicalizes it (`!'()*` included). */
const segment = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The PUT of a message's object: path-style (`endpoint/bucket/key`) on an S3-compatible server,
 * virtual-hosted on AWS (`bucket.s3.region.amazonaws.com/key`), except a bucket with a dot,
 * which AWS's wildcard certificate does not cover (its SDKs go path-style for those too).
 */
export function objectRequest(
  target: S3Target,
  message: Message,
  credentials: SendContext["credentials"],
): ObjectRequest {
  const tls = target.endpoint ? target.endpoint.startsWith("https:") : true;
  const key = `${target.prefix}${message.eventId}.json`;
  const encodedKey = key.split("/").map(segment).join("/");
  const virtual = target.endpoint === null && !target.bucket.includes(".");
  const hostname = virtual ? `${target.bucket}.${target.host}` : target.host;
  const path = virtual ? `/${encodedKey}` : `/${target.bucket}/${encodedKey}`;
  const host =
    (isIP(hostname) === 6 ? `[${hostname}]` : hostname) +
    (target.port === (tls ? 443 : 80) ? "" : `:${target.port}`);
  const headers: Record<string, string> = { "content-type": "application/json" };
  for (const [name, value] of Object.entries(message.headers))
    headers[`x-amz-meta-${name.toLowerCase()}`] = value;
  if (credentials) {
    // aws4 adds Host, X-Amz-Date, X-Amz-Content-Sha256, Content-Length and Authorization.
    const signed = aws4.sign(
      { host, path, method: "PUT", service: "s3", region: target.region, headers, body: message.body },
      { accessKeyId: credentials.username, secretAccessKey: credentials.password },
    );
    for (const [name, value] of Object.entries(signed.headers ?? {})) headers[name] = String(value);
  }
  return {
    url: new URL(`${tls ? "https" : "http"}://${host}${path}`),
    headers,
    bucket: target.bucket,
    key,
    tls,
  };
}

type Lookup = (
  hostname: string,
  options: { all?: boolean },
  callback: (
    err: NodeJS.ErrnoException | null,
    address: string | { address: string; family: number }[],
    family?: number,
  ) => void,
) => void;

/** A DNS lookup that answers only the address the guard resolved: the socket goes nowhere else. */
function only(address: string): Lookup {
  const family = isIP(address);
  return (_hostname, options, callback) =>
    options?.all ? callback(null, [{ address, family }]) : callback(null, address, family);
}

type Answer = { statusCode: number; headers: IncomingHttpHeaders; body: string };

function put(
  request: ObjectRequest,
  body: string,
  agent: HttpAgent | HttpsAgent,
  address: string,
  signal: AbortSignal,
): Promise<Answer> {
  const stream = got.stream(request.url, {
    method: "PUT",
    body,
    headers: request.headers,
    agent: request.tls ? { https: agent as HttpsAgent } : { http: agent as HttpAgent },
    dnsLookup: only(address) as never,
    // Aborting destroys the request's socket, half-open or not: it is never reused.
    signal,
    // A redirect is S3 naming another endpoint or region: the URL is to be fixed, not followed.
    followRedirect: false,
    throwHttpErrors: false,
    retry: { limit: 0 },
  });
  return readBounded(stream, BODY_LIMIT);
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const text = (s: string) => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ENTITIES[e]!).trim();

/** `403 AccessDenied: Access Denied`, from the status and S3's error document, if any. */
export function describeRefusal(statusCode: number, body: string): string {
  const code = /<Code>([^<]{1,100})<\/Code>/.exec(body)?.[1];
  const said = /<Message>([^<]{1,300})<\/Message>/.exec(body)?.[1];
  return `${statusCode}${code ? ` ${text(code)}` : ""}${said ? `: ${text(said)}` : ""}`;
}

export function createS3Transport(options: S3TransportOptions = {}): Transport<S3Target> {
  const pool = new ConnectionPool<HttpAgent | HttpsAgent>(options.maxConnections ?? 64, (agent) =>
    agent.destroy(),
  );
  const agentFor = (request: ObjectRequest, target: S3Target, context: SendContext) => {
    if (options.agent) {
      const agents = options.agent(context.timeoutMs);
      return Promise.resolve(request.tls ? agents.https : agents.http);
    }
    const key = connectionKey(["s3", request.tls, request.url.hostname, target.port], context.credentials);
    return pool.get(key, async () => {
      const settings = {
        keepAlive: true,
        maxSockets: SOCKETS_PER_DESTINATION,
        maxFreeSockets: SOCKETS_PER_DESTINATION,
        timeout: IDLE_MS,
      };
      return request.tls ? new HttpsAgent(settings) : new HttpAgent(settings);
    });
  };

  return {
    type: "s3",
    async send(target, message, context) {
      const request = objectRequest(target, message, context.credentials);
      const where = `s3://${request.bucket}/${request.key}`;
      const answer = await untilAborted(
        (async () => {
          const address = await context.resolve(target.host);
          const agent = await agentFor(request, target, context);
          return put(request, message.body, agent, address, context.signal);
        })(),
        context.signal,
        `the S3 server at ${request.url.host}`,
      );
      if (answer.statusCode >= 200 && answer.statusCode < 300) {
        const etag = answer.headers.etag;
        return { detail: etag ? `${where}, ETag ${etag}` : where };
      }
      const why = scrub(describeRefusal(answer.statusCode, answer.body), context.credentials);
      if (answer.statusCode === 401 || answer.statusCode === 403)
        throw new TransportError("auth_error", `S3 refused access to ${where} (${why})`);
      throw new TransportError("rejected", `S3 refused ${where} (${why})`);
    },
    close: () => pool.close(),
  };
}
