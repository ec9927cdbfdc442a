import {
  DestinationError,
  type DestinationType,
  destinationOrigin,
  destinationType,
  parseTarget,
  REDACTED,
  type Target,
} from "@herald/contracts/destinations";

/**
 * An endpoint's URL as the endpoint form's fields, and back: the scheme names the type (the
 * grammar is @herald/contracts/destinations, which the gateway checks URLs with). Pure: the
 * form keeps the fields, builds the URL it sends from them, and reads a saved URL into them.
 *
 * A destination's user info is its credentials, write-only: the API shows `[redacted]` in
 * their place, and a URL sent back with `[redacted]` keeps those saved.
 */
export type { DestinationType };
export type DestinationKind = Target["type"];

/** The types the form offers, in its order, with the names people know them by. */
export const DESTINATION_CHOICES: readonly { type: DestinationType; label: string }[] = [
  { type: "http", label: "Webhook (HTTP)" },
  { type: "amqp", label: "RabbitMQ" },
  { type: "nats", label: "NATS" },
  { type: "redis", label: "Redis Streams" },
  { type: "mqtt", label: "MQTT" },
  { type: "s3", label: "S3" },
];

export const typeLabel = (type: DestinationType): string =>
  DESTINATION_CHOICES.find((t) => t.type === type)?.label ?? type;

/** The type a URL names; null for one that does not parse or that Herald does not deliver to. */
export function urlType(url: string): DestinationType | null {
  try {
    return destinationType(new URL(url));
  } catch {
    return null;
  }
}

/** A destination beyond HTTP (its attempts have a receipt, not an HTTP response). */
export const isDestination = (url: string): boolean => {
  const type = urlType(url);
  return type !== null && type !== "http";
};

/**
 * Every type's fields as typed, kept across a change of type (a host stays a host). Numbers
 * are text: an empty one takes the grammar's default.
 */
export type DestinationFields = {
  /** amqps://, tls:// (NATS), rediss://, mqtts://. */
  tls: boolean;
  host: string;
  port: string;
  vhost: string;
  exchange: string;
  routingKey: string;
  subject: string;
  db: string;
  stream: string;
  maxlen: string;
  topic: string;
  qos: "1" | "2";
  bucket: string;
  prefix: string;
  endpoint: string;
  region: string;
  /** The user name (S3: the access key id) and password (S3: the secret), write-only. */
  username: string;
  password: string;
  /** The saved URL's user info is `[redacted]`: both left empty keep the saved credentials. */
  saved: boolean;
  /** With `saved`: send no user info, so the saved credentials are removed. */
  removeSaved: boolean;
};

export const EMPTY_FIELDS: DestinationFields = {
  tls: false,
  host: "",
  port: "",
  vhost: "",
  exchange: "",
  routingKey: "",
  subject: "",
  db: "",
  stream: "",
  maxlen: "",
  topic: "",
  qos: "1",
  bucket: "",
  prefix: "",
  endpoint: "",
  region: "",
  username: "",
  password: "",
  saved: false,
  removeSaved: false,
};

/** Each type's scheme without and with TLS (S3 names the server in `endpoint`, https or not). */
const SCHEMES: Record<DestinationKind, readonly [string, string]> = {
  amqp: ["amqp", "amqps"],
  nats: ["nats", "tls"],
  redis: ["redis", "rediss"],
  mqtt: ["mqtt", "mqtts"],
  s3: ["s3", "s3"],
};

/** The port a type uses when the field is empty, as the grammar defaults it. */
export function defaultPort(type: DestinationKind, tls: boolean): number | null {
  if (type === "amqp") return tls ? 5671 : 5672;
  if (type === "nats") return 4222;
  if (type === "redis") return 6379;
  if (type === "mqtt") return tls ? 8883 : 1883;
  return null;
}

export const schemeOf = (type: DestinationKind, tls: boolean): string => SCHEMES[type][tls ? 1 : 0];

/**
 * A query value: percent-encoded as a form would (so `&`, `=`, `+`, `#`, spaces and non-ASCII
 * cannot change the query's shape), except `/` and `:`, which a query may hold as they are and
 * which keep topics and endpoint URLs readable.
 */
const queryValue = (value: string) => encodeURIComponent(value).replace(/%2F/gi, "/").replace(/%3A/gi, ":");

/** A path of segments: each encoded, the slashes between them kept. */
const pathValue = (value: string) => value.split("/").map(encodeURIComponent).join("/");

/** An IPv6 address needs its brackets in a URL; a name or IPv4 address is as typed. */
const hostValue = (host: string) => {
  const h = host.trim();
  return h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
};

const query = (params: [string, string][]) => {
  const given = params.filter(([, value]) => value !== "");
  return given.length ? `?${given.map(([name, value]) => `${name}=${queryValue(value)}`).join("&")}` : "";
};

/** An IPv6 address, bracketed or not (a host with a colon that is not one has a port or a scheme in it). */
const IPV6 = /^\[?[0-9a-f:.]*:[0-9a-f:.]*\]?$/i;

/** Whether the URL sent will keep the saved credentials (`[redacted]` as its user info). */
export const keepsSaved = (f: DestinationFields): boolean =>
  f.saved && !f.removeSaved && f.username === "" && f.password === "";

/** The user info with its `@`: `[redacted]` to keep what is saved, what was typed, or none. */
function userInfo(f: DestinationFields, masked: boolean): string {
  if (keepsSaved(f)) return `${REDACTED}@`;
  if (f.username === "" && f.password === "") return "";
  const password = f.password === "" ? "" : `:${masked ? "••••••" : encodeURIComponent(f.password)}`;
  return `${encodeURIComponent(f.username)}${password}@`;
}

/**
 * The URL of a destination from its fields. `masked` (for showing it) writes the password as
 * dots; the URL sent has it percent-encoded, as every other part.
 */
export function buildDestinationUrl(type: DestinationKind, f: DestinationFields, masked = false): string {
  const t = (value: string) => value.trim();
  const auth = userInfo(f, masked);
  if (type === "s3") {
    const prefix = t(f.prefix).replace(/^\/+/, "");
    return `s3://${auth}${t(f.bucket)}${prefix ? `/${pathValue(prefix)}` : ""}${query([
      ["endpoint", t(f.endpoint)],
      ["region", t(f.region)],
    ])}`;
  }
  const authority = `${schemeOf(type, f.tls)}://${auth}${hostValue(f.host)}${t(f.port) ? `:${t(f.port)}` : ""}`;
  if (type === "amqp") {
    const vhost = t(f.vhost);
    return `${authority}${vhost && vhost !== "/" ? `/${encodeURIComponent(vhost)}` : ""}${query([
      ["exchange", t(f.exchange)],
      ["routing_key", t(f.routingKey)],
    ])}`;
  }
  if (type === "nats") return `${authority}${query([["subject", t(f.subject)]])}`;
  if (type === "redis")
    return `${authority}${t(f.db) ? `/${t(f.db)}` : ""}${query([
      ["stream", t(f.stream)],
      ["maxlen", t(f.maxlen)],
    ])}`;
  return `${authority}${query([
    ["topic", t(f.topic)],
    ["qos", f.qos],
  ])}`;
}

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * A saved destination URL as the form's fields; null for an http(s) URL or one that is no
 * destination. Credentials shown as `[redacted]` read as `saved`, their fields empty.
 */
export function readDestinationUrl(
  text: string,
): { type: DestinationKind; fields: DestinationFields } | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  const type = destinationType(url);
  if (!type || type === "http") return null;
  const param = (name: string) => url.searchParams.get(name) ?? "";
  const path = decoded(url.pathname.replace(/^\//, ""));
  const username = decoded(url.username);
  const password = decoded(url.password);
  const saved = username === REDACTED && password === "";
  const fields: DestinationFields = {
    ...EMPTY_FIELDS,
    tls: type !== "s3" && url.protocol === `${SCHEMES[type][1]}:`,
    username: saved ? "" : username,
    password: saved ? "" : password,
    saved,
  };
  if (type === "s3")
    return {
      type,
      fields: {
        ...fields,
        bucket: url.hostname,
        prefix: path,
        endpoint: param("endpoint"),
        region: param("region"),
      },
    };
  fields.host = url.hostname.replace(/^\[|\]$/g, "");
  fields.port = url.port;
  if (type === "amqp")
    Object.assign(fields, {
      vhost: path === "/" ? "" : path,
      exchange: param("exchange"),
      routingKey: param("routing_key"),
    });
  else if (type === "nats") fields.subject = param("subject");
  else if (type === "redis")
    Object.assign(fields, { db: path, stream: param("stream"), maxlen: param("maxlen") });
  else Object.assign(fields, { topic: param("topic"), qos: param("qos") === "2" ? "2" : "1" });
  return { type, fields };
}

/** A field the form marks, or `url` for what the grammar says of the URL as a whole. */
export type DestinationField = keyof DestinationFields | "url";
export type DestinationProblem = { field: DestinationField; message: string };

/**
 * What would make the API refuse the URL, found before sending: a required field left empty,
 * a port that is no port, saved credentials that would not follow a new server; then the
 * grammar the gateway runs (its message, at the URL). The API's word still stands.
 */
export function destinationProblems(
  type: DestinationKind,
  f: DestinationFields,
  savedUrl: string | null,
): DestinationProblem[] {
  const problems: DestinationProblem[] = [];
  const need = (field: keyof DestinationFields, message: string) => {
    if (String(f[field]).trim() === "") problems.push({ field, message });
  };
  if (type === "s3") need("bucket", "Enter the bucket's name.");
  else {
    need("host", "Enter the server's host name or address.");
    const host = f.host.trim();
    if (/[/?#@\s]/.test(host) || (host.includes(":") && !IPV6.test(host)))
      problems.push({
        field: "host",
        message:
          "Only the host: a name or an address, without a scheme, path or port (the port has its own field).",
      });
    const port = f.port.trim();
    if (port && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65_535))
      problems.push({
        field: "port",
        message: "A port is a whole number from 1 to 65535; leave it empty for the default.",
      });
  }
  // A URL resolves . and .. path segments away (s3://b/a/../c is s3://b/c): said here, or the
  // URL sent would quietly name another prefix or vhost.
  const dots = (path: string) =>
    path
      .trim()
      .split("/")
      .some((segment) => segment === "." || segment === "..");
  if (type === "s3" && dots(f.prefix))
    problems.push({ field: "prefix", message: "The key prefix must not have . or .. segments." });
  if (type === "amqp" && [".", ".."].includes(f.vhost.trim()))
    problems.push({ field: "vhost", message: "A virtual host named . or .. cannot be written in a URL." });
  if (type === "nats") need("subject", "Enter the subject to publish to.");
  if (type === "redis") need("stream", "Enter the stream's key.");
  if (type === "mqtt") need("topic", "Enter the topic to publish to.");
  if (type === "amqp" && !f.exchange.trim() && !f.routingKey.trim())
    problems.push({
      field: "routingKey",
      message:
        "Enter an exchange, a routing key or both (with the default exchange, the routing key is the queue's name).",
    });
  if (problems.length) return problems;
  const url = buildDestinationUrl(type, f);
  if (keepsSaved(f) && savedUrl && !sameDestination(url, savedUrl))
    problems.push({
      field: "username",
      message:
        "The destination moves to another server: type its credentials again (saved ones go only where they were set for), or remove them.",
    });
  const grammar = grammarProblem(url);
  if (grammar) problems.push({ field: "url", message: grammar });
  return problems;
}

/** The gateway's grammar on a URL: what it would say is wrong, or null. */
export function grammarProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "These fields do not make a URL: check the host (a name or an address, without a scheme or a path).";
  }
  try {
    parseTarget(url);
    return null;
  } catch (err) {
    if (err instanceof DestinationError) return err.message;
    // Not the grammar's own word on the URL: the API's answer will say.
    return null;
  }
}

/** Whether saved credentials may follow from one URL to the other (as the gateway decides). */
function sameDestination(a: string, b: string): boolean {
  try {
    return destinationOrigin(new URL(a)) === destinationOrigin(new URL(b));
  } catch {
    return false;
  }
}
