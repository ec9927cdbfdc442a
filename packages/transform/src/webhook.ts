import { RESULT_MAX_BYTES, TransformationError } from "./sandbox.ts";

/**
 * What a transformation is given and what it may give back. The shape follows Svix's
 * transformations, so a team's `handler(webhook)` carries over: `method`, `url`, `payload`,
 * `cancel`, and `eventType` beside Herald's snake_case names.
 */

/** The request Herald would make, as `handler(webhook)` receives it. */
export type WebhookInput = {
  event_type: string;
  event_id: string;
  method: "POST";
  url: string;
  /** The endpoint's custom headers (their values), which the request carries. */
  headers: Record<string, string>;
  /** The body Herald would send, parsed: `{ type, timestamp, data }`. */
  payload: unknown;
};

/**
 * What one attempt would send, as the pool takes it (pool.ts): its worker builds the webhook
 * object from it (webhookInput), off the service's thread.
 */
export type WebhookAttempt = {
  event_id: string;
  url: string;
  /** The endpoint's custom headers, as saved (names in any case). */
  headers: Record<string, string>;
  /** The exact body Herald would send, as text. */
  payload: string;
};

/**
 * The object `handler(webhook)` receives for one attempt, built from what the attempt sends:
 * the sender builds it from `attempt.requested.v1` (its `payload` text, the endpoint's opened
 * custom headers) before each attempt, and the gateway's try-it builds it the same way, so what
 * a preview runs on is what a delivery runs on. `payload` is the exact body Herald would send
 * (`webhookPayload`: `{"type":…,"timestamp":…,"data":…}`), parsed here; its `type` is the event
 * type. Header names are lower-cased: a handler reads `webhook.headers["x-tenant"]` whatever the
 * case they were saved in.
 */
export function webhookInput(attempt: WebhookAttempt): WebhookInput {
  const payload = JSON.parse(attempt.payload) as { type?: unknown };
  return {
    event_type: typeof payload.type === "string" ? payload.type : "",
    event_id: attempt.event_id,
    method: "POST",
    url: attempt.url,
    headers: Object.fromEntries(
      Object.entries(attempt.headers).map(([name, value]) => [name.toLowerCase(), value]),
    ),
    payload,
  };
}

/** The request to make instead, or `cancel`: no attempt is made and the delivery ends `cancelled`. */
export type TransformedRequest =
  | { cancel: true }
  | {
      cancel: false;
      method: Method;
      url: string;
      /** The headers the transformation set or changed (custom ones included), names lower-cased. */
      headers: Record<string, string>;
      /** The body to send and sign: the payload as JSON, or a string payload as it is. */
      body: string;
    };

export const METHODS = ["POST", "PUT", "PATCH"] as const;
type Method = (typeof METHODS)[number];

/**
 * Headers Herald sets itself and a transformation may not: the signature covers the body sent
 * under Herald's id and timestamp, and the connection's framing is Node's to write (the same
 * as an endpoint's own headers may not set, but content-type, and `expect`).
 */
const RESERVED = new Set([
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "content-length",
  "transfer-encoding",
  "host",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "user-agent",
]);

/** The most headers a transformation may return, and the longest value: an endpoint's own are fewer. */
const HEADERS_MAX = 64;
const HEADER_VALUE_MAX = 4096;
/** The longest URL a transformation may set, as normalised (what is sent and recorded). */
const URL_MAX = 2048;

/** The object handed to `handler`, as JSON text: Herald's names and Svix's `eventType`. */
export function inputJson(input: WebhookInput): string {
  return JSON.stringify({ ...input, eventType: input.event_type, cancel: false });
}

/** Reads what `handler` returned (as JSON text) into the request to make; throws `invalid` when it is not one. */
export function readResult(json: string, input: WebhookInput): TransformedRequest {
  if (json.length > RESULT_MAX_BYTES)
    throw invalid(`returned ${json.length} bytes as JSON; ${RESULT_MAX_BYTES} at most`);
  const result: unknown = JSON.parse(json);
  if (typeof result !== "object" || result === null || Array.isArray(result))
    throw invalid(
      `returned ${result === null ? "nothing" : typeof result}; it must return the webhook object`,
    );
  const out = result as Record<string, unknown>;
  if (out.cancel === true) return { cancel: true };
  if (out.cancel !== undefined && out.cancel !== false)
    throw invalid("set `cancel` to something other than true or false");
  const method = out.method ?? input.method;
  if (typeof method !== "string" || !(METHODS as readonly string[]).includes(method.toUpperCase()))
    throw invalid(`set \`method\` to ${JSON.stringify(method)}; it may be ${METHODS.join(", ")}`);
  const url = out.url ?? input.url;
  if (typeof url !== "string" || url.length > 2048) throw invalid("set `url` to something other than a URL");
  if (url !== input.url) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalid(`set \`url\` to ${JSON.stringify(url.slice(0, 200))}, which is not a URL`);
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
      throw invalid(
        `set \`url\` to a ${parsed.protocol} URL; it may change an HTTP endpoint's URL to another http(s) one`,
      );
    // Percent-encoding can make a URL's sent form many times its text.
    if (parsed.href.length > URL_MAX)
      throw invalid(`set \`url\` to one of ${parsed.href.length} characters as sent; ${URL_MAX} at most`);
  }
  return {
    cancel: false,
    method: method.toUpperCase() as Method,
    url,
    headers: readHeaders(out.headers),
    body: bodyOf(out.payload),
  };
}

function readHeaders(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw invalid("set `headers` to something other than an object");
  const headers: Record<string, string> = {};
  const entries = Object.entries(value);
  if (entries.length > HEADERS_MAX)
    throw invalid(`returned ${entries.length} headers; ${HEADERS_MAX} at most`);
  for (const [name, raw] of entries) {
    const lower = name.toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower))
      throw invalid(`set a header named ${JSON.stringify(name)}, which HTTP does not allow`);
    if (RESERVED.has(lower)) continue;
    const text =
      typeof raw === "string"
        ? raw
        : typeof raw === "number" || typeof raw === "boolean"
          ? String(raw)
          : null;
    if (text === null || /[\r\n\0]/.test(text))
      throw invalid(`set header ${lower} to something other than a one-line string`);
    // What HTTP carries in a header value: tabs, visible ASCII and Latin-1 (Node sends no more).
    if (text.length > HEADER_VALUE_MAX || /[^\t\x20-\x7e\x80-\xff]/.test(text))
      throw invalid(
        `set header ${lower} to a value of over ${HEADER_VALUE_MAX} characters, or with characters HTTP does not carry`,
      );
    headers[lower] = text;
  }
  return headers;
}

function bodyOf(payload: unknown): string {
  if (typeof payload === "string") return payload;
  if (payload === undefined) throw invalid("returned no `payload`");
  return JSON.stringify(payload);
}

function invalid(what: string): TransformationError {
  return new TransformationError("invalid", `the transformation ${what}`);
}
