import { createHmac, timingSafeEqual } from "node:crypto";
import { HeraldError } from "./errors.ts";

/**
 * Receiving webhooks: Standard Webhooks (https://www.standardwebhooks.com), as Herald signs them.
 * Each request carries `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`:
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by the base64 part of the
 * endpoint's `whsec_` secret; several, space-separated, while a rotated secret still signs.
 */
export type WebhookPayload<T = Record<string, unknown>> = { type: string; timestamp: string; data: T };

/** A Fetch `Headers`, Node's `IncomingHttpHeaders`, or a plain object (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyOptions = {
  /** How far the timestamp may be from now, either way, in seconds. Default 300: replays older than that fail. */
  toleranceSeconds?: number;
  /** The time to check against, a Date or unix seconds (for tests). Default: now. */
  now?: Date | number;
};

export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export type WebhookFailure =
  | "missing_header"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "no_matching_signature"
  | "invalid_payload";

/** The webhook is not genuine, or not fresh: answer it with a 400 and do nothing else. */
export class WebhookVerificationError extends HeraldError {
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message);
  }
}

function keyOf(secret: string | Uint8Array): Uint8Array {
  const key =
    typeof secret === "string"
      ? Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64")
      : secret;
  // The receiver's mistake, not the sender's: not a WebhookVerificationError, so it is not answered 400.
  if (key.length === 0)
    throw new HeraldError("The webhook secret is empty: pass the endpoint's whsec_… secret.");
  return key;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return Array.isArray(value) ? value.join(" ") : value;
  }
  return undefined;
}

const bytesOf = (body: string | Uint8Array): Uint8Array =>
  typeof body === "string" ? Buffer.from(body, "utf8") : body;

/** The base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, over the body's bytes as received. */
function signature(key: Uint8Array, id: string, timestamp: number, body: string | Uint8Array): string {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(bytesOf(body)).digest("base64");
}

/** The `webhook-signature` value Herald would send: `v1,<base64>`. For testing your handlers. */
export function signWebhook(
  secret: string | Uint8Array,
  message: { id: string; timestamp: number | Date; body: string | Uint8Array },
): string {
  const seconds =
    message.timestamp instanceof Date ? Math.floor(message.timestamp.getTime() / 1000) : message.timestamp;
  return `v1,${signature(keyOf(secret), message.id, seconds, message.body)}`;
}

/**
 * Checks a received webhook and returns its parsed payload: `{ type, timestamp, data }` as Herald
 * sends it. `body` must be the raw body as received (a string, or the bytes): a body parsed and
 * serialized again no longer matches its signature. Throws a WebhookVerificationError when a
 * header is missing, the timestamp is more than `toleranceSeconds` from now, or no `v1`
 * signature matches.
 */
export function verifyWebhook<T = WebhookPayload>(
  secret: string | Uint8Array,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): T {
  const key = keyOf(secret);
  const id = headerOf(headers, "webhook-id");
  const timestampHeader = headerOf(headers, "webhook-timestamp");
  const signatures = headerOf(headers, "webhook-signature");
  for (const [name, value] of [
    ["webhook-id", id],
    ["webhook-timestamp", timestampHeader],
    ["webhook-signature", signatures],
  ] as const) {
    if (!value) throw new WebhookVerificationError("missing_header", `The ${name} header is missing.`);
  }
  if (!/^\d{1,15}$/.test(timestampHeader!.trim()))
    throw new WebhookVerificationError(
      "invalid_timestamp",
      "The webhook-timestamp header is not unix seconds.",
    );
  const timestamp = Number(timestampHeader!.trim());
  const now = Math.floor(
    options.now instanceof Date ? options.now.getTime() / 1000 : (options.now ?? Date.now() / 1000),
  );
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (now - timestamp > tolerance)
    throw new WebhookVerificationError("timestamp_too_old", "The webhook's timestamp is too old.");
  if (timestamp - now > tolerance)
    throw new WebhookVerificationError("timestamp_too_new", "The webhook's timestamp is in the future.");

  const expected = Buffer.from(signature(key, id!, timestamp, body));
  const matched = signatures!.split(" ").some((entry) => {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") return false;
    const given = Buffer.from(entry.slice(comma + 1));
    // The length is no secret (every v1 signature is 44 characters); the content is compared in constant time.
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matched)
    throw new WebhookVerificationError(
      "no_matching_signature",
      "No signature of the webhook matches the secret.",
    );
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new WebhookVerificationError("invalid_payload", "The webhook's body is not JSON.");
  }
}
