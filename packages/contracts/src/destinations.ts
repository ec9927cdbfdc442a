/**
 * Where an endpoint's deliveries go, read from its `url`: the scheme names the type. HTTP(S)
 * is a webhook; the others publish the same signed message to a queue, stream, topic or
 * bucket. Each type's URL grammar is here (the gateway checks URLs with it, the sender reads
 * its targets with it); each type's client is one module of the sender
 * (services/sender/src/transports/). No I/O here.
 *
 * User info in a URL is the destination's credentials: the gateway seals it at rest and shows
 * `[redacted]` in its place (`redactUserInfo`); the sender puts it back before connecting.
 */

export type AmqpTarget = {
  type: "amqp";
  tls: boolean;
  host: string;
  port: number;
  vhost: string;
  exchange: string;
  routingKey: string;
};
export type NatsTarget = { type: "nats"; tls: boolean; host: string; port: number; subject: string };
export type RedisTarget = {
  type: "redis";
  tls: boolean;
  host: string;
  port: number;
  db: number;
  stream: string;
  /** XADD's MAXLEN ~: the stream is trimmed to about this many entries; null: never. */
  maxlen: number | null;
};
export type MqttTarget = {
  type: "mqtt";
  tls: boolean;
  host: string;
  port: number;
  topic: string;
  qos: 1 | 2;
};
export type S3Target = {
  type: "s3";
  bucket: string;
  /** Object keys start with it (no leading slash; empty, or ending in `/` as given). */
  prefix: string;
  /** An S3-compatible server's base URL (MinIO, a local one); null: AWS S3 of `region`. */
  endpoint: string | null;
  region: string;
  /** Its host, for the destination guard: the endpoint's, or AWS's. */
  host: string;
  port: number;
};

export type Target = AmqpTarget | NatsTarget | RedisTarget | MqttTarget | S3Target;
export type DestinationType = "http" | Target["type"];

/** Each scheme and the type it names. */
export const SCHEMES: Readonly<Record<string, DestinationType>> = {
  "http:": "http",
  "https:": "http",
  "amqp:": "amqp",
  "amqps:": "amqp",
  "nats:": "nats",
  "tls:": "nats",
  "redis:": "redis",
  "rediss:": "redis",
  "mqtt:": "mqtt",
  "mqtts:": "mqtt",
  "s3:": "s3",
};

/** A URL that names a type but not a usable destination of it: the message says what to fix. */
export class DestinationError extends Error {}

const fail = (message: string): never => {
  throw new DestinationError(message);
};

/** The query's parameters, only those named allowed, each at most once. */
function query(url: URL, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (!allowed.includes(name))
      fail(
        `${url.protocol}// URLs take ${allowed.map((a) => `'${a}'`).join(", ")} in the query; not '${name}'.`,
      );
    if (params.has(name)) fail(`'${name}' is given twice.`);
    params.set(name, value);
  }
  return params;
}

/** A URL part percent-decoded; a malformed escape (`%ZZ`) says so instead of throwing URIError. */
function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return fail(`The URL's ${what} has a malformed percent-escape.`);
  }
}

const NAME = /^[\x21-\x7e]{1,255}$/;
function required(params: Map<string, string>, name: string, scheme: string): string {
  const value = params.get(name);
  if (!value) fail(`${scheme}// URLs need '${name}' in the query, e.g. ?${name}=orders.`);
  if (!NAME.test(value!)) fail(`'${name}' must be 1 to 255 visible ASCII characters, without spaces.`);
  return value!;
}

function port(url: URL, otherwise: number): number {
  return url.port ? Number(url.port) : otherwise;
}

const host = (url: URL) => {
  if (!url.hostname) fail(`${url.protocol}// URLs need a host.`);
  return url.hostname.replace(/^\[|\]$/g, "");
};

function noPath(url: URL) {
  if (url.pathname && url.pathname !== "/")
    fail(`${url.protocol}// URLs take no path; got '${url.pathname}'.`);
}

function integer(value: string | undefined, name: string, min: number, max: number): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    fail(`'${name}' must be a whole number from ${min} to ${max}; got '${value}'.`);
  return Number(value);
}

const PARSERS: Record<Target["type"], (url: URL) => Target> = {
  amqp(url) {
    const tls = url.protocol === "amqps:";
    const params = query(url, ["exchange", "routing_key"]);
    const vhost = decoded(url.pathname.replace(/^\//, ""), "vhost (its path)") || "/";
    const exchange = params.get("exchange") ?? "";
    if (exchange && !NAME.test(exchange))
      fail("'exchange' must be visible ASCII characters, without spaces.");
    const routingKey = params.get("routing_key") ?? "";
    if (!exchange && !routingKey)
      fail(
        "amqp:// URLs need 'exchange', 'routing_key' or both (the default exchange routes by queue name).",
      );
    if (routingKey.length > 255) fail("'routing_key' is at most 255 characters.");
    return {
      type: "amqp",
      tls,
      host: host(url),
      port: port(url, tls ? 5671 : 5672),
      vhost,
      exchange,
      routingKey,
    };
  },
  nats(url) {
    noPath(url);
    const subject = required(query(url, ["subject"]), "subject", url.protocol);
    if (/[*>]/.test(subject) || subject.startsWith(".") || subject.endsWith(".") || subject.includes(".."))
      fail("'subject' must be a plain subject: no wildcards (* >), no empty tokens.");
    return { type: "nats", tls: url.protocol === "tls:", host: host(url), port: port(url, 4222), subject };
  },
  redis(url) {
    const params = query(url, ["stream", "maxlen"]);
    const path = url.pathname.replace(/^\//, "");
    const db = path === "" ? 0 : integer(path, "database (the URL's path)", 0, 15);
    const stream = required(params, "stream", url.protocol);
    const maxlen = integer(params.get("maxlen"), "maxlen", 1, 1_000_000_000);
    const tls = url.protocol === "rediss:";
    return { type: "redis", tls, host: host(url), port: port(url, 6379), db: db ?? 0, stream, maxlen };
  },
  mqtt(url) {
    noPath(url);
    const params = query(url, ["topic", "qos"]);
    const topic = params.get("topic");
    if (!topic) fail("mqtt:// URLs need 'topic' in the query, e.g. ?topic=herald/orders.");
    // Its UTF-8 length by TextEncoder, not Buffer: the portal runs this grammar in the browser.
    if (/[+#\0]/.test(topic!) || new TextEncoder().encode(topic!).length > 65_535)
      fail("'topic' must be a topic name to publish to: no wildcards (+ #).");
    if (topic!.startsWith("$")) fail("'topic' must not start with $: those topics are the broker's own.");
    const qos = integer(params.get("qos"), "qos", 1, 2) ?? 1;
    const tls = url.protocol === "mqtts:";
    return {
      type: "mqtt",
      tls,
      host: host(url),
      port: port(url, tls ? 8883 : 1883),
      topic: topic!,
      qos: qos as 1 | 2,
    };
  },
  s3(url) {
    const params = query(url, ["endpoint", "region"]);
    const bucket = url.hostname;
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
      fail("s3:// URLs name a bucket as their host: 3 to 63 of a-z 0-9 . -");
    const prefix = decoded(url.pathname.replace(/^\//, ""), "key prefix (its path)");
    if (prefix.split("/").some((segment) => segment === "." || segment === ".."))
      fail("The key prefix (the URL's path) must not have . or .. segments.");
    if (prefix.length > 512) fail("The key prefix (the URL's path) is at most 512 characters.");
    const region = params.get("region") ?? "us-east-1";
    if (!/^[a-z0-9-]{1,32}$/.test(region)) fail("'region' must be a region name such as eu-west-1.");
    const endpointText = params.get("endpoint");
    if (endpointText === undefined) {
      const awsHost = `s3.${region}.amazonaws.com`;
      return { type: "s3", bucket, prefix, endpoint: null, region, host: awsHost, port: 443 };
    }
    let endpoint: URL;
    try {
      endpoint = new URL(endpointText);
    } catch {
      return fail("'endpoint' must be an http or https URL, such as https://minio.example.com:9000.");
    }
    if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:")
      fail("'endpoint' must be an http or https URL, such as https://minio.example.com:9000.");
    if (endpoint.username || endpoint.password)
      fail("'endpoint' takes no credentials: put them in the s3:// URL.");
    const endpointPort = port(endpoint, endpoint.protocol === "https:" ? 443 : 80);
    return {
      type: "s3",
      bucket,
      prefix,
      endpoint: endpoint.origin,
      region,
      host: endpoint.hostname.replace(/^\[|\]$/g, ""),
      port: endpointPort,
    };
  },
};

/** The type a URL names: `http` for a webhook, null for a scheme Herald does not deliver to. */
export function destinationType(url: URL): DestinationType | null {
  return SCHEMES[url.protocol] ?? null;
}

/**
 * The URL scheme of a `herald listen` endpoint: `herald-listen://<endpoint id>`, made by the
 * gateway only. Not a destination type: the sender relays its attempts to the CLI's socket.
 */
export const LISTEN_SCHEME = "herald-listen:";

/** A non-HTTP URL's target; throws DestinationError saying what is wrong with it. */
export function parseTarget(url: URL): Target {
  const type = destinationType(url);
  if (!type || type === "http")
    return fail(`'${url.protocol}' is not a destination type Herald publishes to.`);
  userInfo(url); // its escapes checked here, so a malformed one is the URL's fault, said at once
  return PARSERS[type](url);
}

/** What stands in for user info at rest and in every view of an endpoint's URL. */
export const REDACTED = "[redacted]";

/**
 * The URL as stored and shown: user info, if any, replaced by `[redacted]`, written as such (a
 * URL parser reads it back as the user name `%5Bredacted%5D`).
 */
export function redactUserInfo(url: URL): string {
  if (!url.username && !url.password) return url.href;
  const shown = new URL(url.href);
  shown.username = "redacted";
  shown.password = "";
  return shown.href.replace("//redacted@", `//${REDACTED}@`);
}

/** The user info of a URL as its type's client takes it, decoded; null without any. */
export function userInfo(url: URL): { username: string; password: string } | null {
  if (!url.username && !url.password) return null;
  return { username: decoded(url.username, "user name"), password: decoded(url.password, "password") };
}

/**
 * Where a URL's deliveries go, for deciding whether saved secrets (custom headers, an OAuth2
 * client secret, the URL's credentials) may follow a new URL: the origin of an HTTP URL; for
 * other types the scheme and host (with port), and for S3 the bucket with the server it is on.
 * `new URL().origin` is "null" for every non-HTTP scheme, so it cannot serve.
 */
export function destinationOrigin(url: URL): string {
  const type = destinationType(url);
  if (type === "http") return url.origin;
  if (type === "s3") {
    const endpoint = url.searchParams.get("endpoint");
    const region = url.searchParams.get("region") ?? "us-east-1";
    return `s3://${url.hostname}@${endpoint ?? `aws:${region}`}`;
  }
  return `${url.protocol}//${url.host}`;
}

/** Every type Herald delivers to. */
export const DESTINATION_TYPES: readonly DestinationType[] = ["http", "amqp", "nats", "redis", "mqtt", "s3"];

/**
 * DESTINATION_TYPES as an installation sets it (comma-separated; empty: every type), read
 * alike by the gateway, which refuses endpoints of other types, and the senders, which fail
 * attempts to them as `blocked_destination`.
 */
export function destinationTypesFrom(raw: string): { types: DestinationType[]; unknown: string[] } {
  const names = raw
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (!names.length) return { types: [...DESTINATION_TYPES], unknown: [] };
  const known = new Set<string>(DESTINATION_TYPES);
  return {
    types: names.filter((n): n is DestinationType => known.has(n)),
    unknown: names.filter((n) => !known.has(n)),
  };
}
