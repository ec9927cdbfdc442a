import { createHash } from "node:crypto";
import type { EndpointAuth, ErrorKind } from "@herald/contracts";
import { deadline } from "@herald/runtime";
import type { Got } from "got";
import { blockedLiteral } from "./destinations.ts";
import { errorKind } from "./errorKind.ts";

type OAuth2 = NonNullable<EndpointAuth["oauth2"]>;

/**
 * OAuth2 client credentials (RFC 6749 §4.4) for endpoints that want a bearer token: fetched
 * from the endpoint's token URL, cached in this sender until shortly before it expires, and
 * fetched again when the endpoint answers 401 (the caller asks with `fresh`).
 *
 * One endpoint's token server cannot hold up another's deliveries: a fetch is bounded by the
 * attempt's own time and reads at most TOKEN_BODY_MAX bytes; attempts of one endpoint waiting
 * for a token share one fetch; the token URL goes through the same SSRF guard and egress as
 * webhooks (the caller's got client); and the cache holds one token an endpoint, CACHE_SIZE_MAX
 * in all.
 */
export class TokenError extends Error {
  readonly code = "HERALD_AUTH_ERROR";
  /**
   * The attempt's error: `auth_error` when the token server answered something other than a
   * token; the network's (`timeout`, `connection_error`, ...) when it could not be reached, which
   * counts toward pausing the endpoint as its own would (a hanging token server holds sender
   * slots as a hanging endpoint does).
   */
  constructor(
    message: string,
    readonly kind: ErrorKind = "auth_error",
  ) {
    super(message);
  }
}

/** A token server's answer is read this far at most. */
const TOKEN_BODY_MAX = 65_536;
/** What the cache may hold (one token an endpoint), counted as below; past it, expired ones go, then the oldest. */
const CACHE_SIZE_MAX = 16 * 1024 * 1024;
/** An entry's size: its token's characters and this for the rest of it (key, hash, object, map slot). */
const ENTRY_OVERHEAD = 512;
/** A token longer than this is refused: it would be sent in a header with every attempt. */
const TOKEN_MAX = 4096;
/** What a bearer token may hold (RFC 6750's b64token, and the other visible ASCII some servers use). */
const TOKEN_CHARS = /^[\x21-\x7E]+$/;
/** A token is fetched again this long before it expires (or a tenth of its life, if shorter). */
const EARLY_MS = 30_000;
/** A token whose answer says no `expires_in` is kept this long (a 401 replaces it sooner). */
const UNKNOWN_LIFE_MS = 300_000;

type Cached = { token: string; expiresAt: number };

export class TokenCache {
  /** By endpoint: one token each, for the settings `config` hashes to (a new secret or scope is a new token). */
  private readonly tokens = new Map<string, Cached & { config: string }>();
  private readonly pending = new Map<string, Promise<Cached>>();
  private size = 0;

  /** `fetchTimeoutMs`: a fetch's own bound; each attempt waiting on it also stops at its own deadline. */
  constructor(private readonly fetchTimeoutMs = 15_000) {}

  /** The endpoint's token: cached, unless `fresh` (the endpoint refused the cached one). */
  async token(
    endpointId: string,
    config: OAuth2,
    client: Got,
    allowPrivate: boolean,
    fresh: boolean,
    signal?: AbortSignal,
  ): Promise<string> {
    // A fetch nobody waits for would be started for nothing, and its failure handled by no one.
    if (signal?.aborted) throw signal.reason;
    const hash = createHash("sha256").update(JSON.stringify(config)).digest("base64url");
    const cached = this.tokens.get(endpointId);
    if (cached && cached.config === hash && !fresh && cached.expiresAt > Date.now()) return cached.token;
    if (cached) this.forget(endpointId);
    // Attempts of the endpoint waiting for a token share one fetch, bounded by its own timeout
    // (not the first waiter's deadline); each waiter gives up at its own.
    const key = `${endpointId}:${hash}`;
    let fetching = this.pending.get(key);
    if (!fetching) {
      const limit = deadline(this.fetchTimeoutMs);
      fetching = fetchToken(config, client, allowPrivate, limit.signal)
        .then((got) => {
          this.keep(endpointId, { ...got, config: hash });
          return got;
        })
        .finally(() => {
          limit.clear();
          this.pending.delete(key);
        });
      // Its waiters each handle its failure; should all have given up, it is not unhandled.
      fetching.catch(() => {});
      this.pending.set(key, fetching);
    }
    return (await untilAborted(fetching, signal)).token;
  }

  private keep(endpointId: string, entry: Cached & { config: string }): void {
    this.forget(endpointId);
    this.tokens.set(endpointId, entry);
    this.size += entry.token.length + ENTRY_OVERHEAD;
    if (this.size <= CACHE_SIZE_MAX) return;
    const now = Date.now();
    for (const [id, t] of this.tokens) if (t.expiresAt <= now) this.forget(id);
    for (const id of this.tokens.keys()) {
      if (this.size <= CACHE_SIZE_MAX) break;
      this.forget(id);
    }
  }

  private forget(endpointId: string): void {
    const t = this.tokens.get(endpointId);
    if (!t) return;
    this.size -= t.token.length + ENTRY_OVERHEAD;
    this.tokens.delete(endpointId);
  }
}

/** `p`, or the signal's abort, whichever comes first. */
function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

async function fetchToken(
  config: OAuth2,
  client: Got,
  allowPrivate: boolean,
  signal?: AbortSignal,
): Promise<Cached> {
  let url: URL;
  try {
    url = new URL(config.token_url);
  } catch {
    throw new TokenError("the token URL is not a URL");
  }
  if (!allowPrivate && blockedLiteral(url))
    throw Object.assign(new Error("token URL blocked"), { code: "HERALD_BLOCKED_DESTINATION" });
  const form = new URLSearchParams({ grant_type: "client_credentials" });
  if (config.scope) form.set("scope", config.scope);
  if (config.audience) form.set("audience", config.audience);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if ((config.client_auth ?? "basic") === "basic") {
    headers.authorization = `Basic ${basicCredentials(config)}`;
  } else {
    form.set("client_id", config.client_id);
    form.set("client_secret", config.client_secret);
  }
  let res: { status: number; body: string };
  try {
    res = await readLimited(client, url, headers, form.toString(), signal);
  } catch (err) {
    if (err instanceof TokenError || (err as { code?: string }).code === "HERALD_BLOCKED_DESTINATION")
      throw err;
    const kind = errorKind(err);
    throw new TokenError(`the token endpoint could not be reached (${kind})`, kind);
  }
  if (res.status < 200 || res.status >= 300)
    throw new TokenError(`the token endpoint answered HTTP ${res.status}${refusal(res.body, config)}`);
  // Nothing of a 2xx answer is repeated: it may hold a token, and attempts are read by many.
  const problem = (why: string) => new TokenError(`the token endpoint ${why}`);
  let answer: { access_token?: unknown; token_type?: unknown; expires_in?: unknown } | null;
  try {
    answer = JSON.parse(res.body);
  } catch {
    throw problem("answered something other than JSON");
  }
  if (typeof answer !== "object" || answer === null)
    throw problem("answered something other than a JSON object");
  if (typeof answer.access_token !== "string" || !answer.access_token) throw problem("gave no access_token");
  if (answer.access_token.length > TOKEN_MAX)
    throw problem(`gave an access_token over ${TOKEN_MAX} characters`);
  if (!TOKEN_CHARS.test(answer.access_token))
    throw problem("gave an access_token with characters a bearer token cannot hold");
  if (typeof answer.token_type === "string" && answer.token_type.toLowerCase() !== "bearer")
    throw problem(
      `gave a token of type ${JSON.stringify(scrubbed(answer.token_type, config).slice(0, 32))}, not bearer`,
    );
  const life =
    typeof answer.expires_in === "number" && answer.expires_in > 0
      ? answer.expires_in * 1000
      : UNKNOWN_LIFE_MS;
  return { token: answer.access_token, expiresAt: Date.now() + life - Math.min(EARLY_MS, life / 10) };
}

/** RFC 6749 §2.3.1: the client id and secret, each form-encoded, then base64 for HTTP Basic. */
function basicCredentials(config: OAuth2): string {
  return Buffer.from(`${formPart(config.client_id)}:${formPart(config.client_secret)}`).toString("base64");
}

const formPart = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");

/** How much of a refusal's `error` and `error_description` is kept. */
const ERROR_MAX = 64;
const DESCRIPTION_MAX = 200;

/**
 * `text` with the client secret, in each form the token server was sent it or might repeat it
 * (as is, percent- or form-encoded, and the Basic credentials), as `[redacted]`. Attempts are
 * read by many, a read-only portal session too, and a token server may repeat what it was sent.
 */
function scrubbed(text: string, config: OAuth2): string {
  const secret = config.client_secret;
  const forms = new Set([
    basicCredentials(config),
    new URLSearchParams({ s: secret }).toString().slice(2),
    formPart(secret),
    encodeURIComponent(secret),
    secret,
  ]);
  let out = text;
  // The longest first: a form that holds another is replaced whole.
  for (const form of [...forms].filter(Boolean).sort((a, b) => b.length - a.length))
    out = out.replace(new RegExp(form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"), "[redacted]");
  return out;
}

/** At most `max` characters of `value` (never half of one), control characters as spaces. */
function clipped(value: string, max: number): string {
  const chars = Array.from(value.replace(/\p{Cc}+/gu, " ").trim());
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : chars.join("");
}

/**
 * What a refusal says: OAuth2's `error` and `error_description` (RFC 6749 §5.2), from a JSON
 * body or a form-encoded one, cut short, the credentials sent scrubbed; nothing else of the
 * body, which may repeat the request.
 */
function refusal(body: string, config: OAuth2): string {
  let fields: { error?: unknown; error_description?: unknown } | null = null;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed === "object" && parsed !== null) fields = parsed;
  } catch {
    const form = new URLSearchParams(body.trim());
    if (form.has("error"))
      fields = { error: form.get("error"), error_description: form.get("error_description") };
  }
  const error = typeof fields?.error === "string" ? clipped(scrubbed(fields.error, config), ERROR_MAX) : "";
  if (!error) return "";
  const description = fields?.error_description;
  return typeof description === "string" && description.trim()
    ? `: ${error} (${clipped(scrubbed(description, config), DESCRIPTION_MAX)})`
    : `: ${error}`;
}

/** POSTs the form and reads at most TOKEN_BODY_MAX bytes of the answer. */
function readLimited(
  client: Got,
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = client.stream(url, { method: "POST", headers, body, ...(signal ? { signal } : {}) });
    const chunks: Buffer[] = [];
    let size = 0;
    let status = 0;
    stream.on("response", (r: { statusCode: number }) => {
      status = r.statusCode;
    });
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > TOKEN_BODY_MAX) {
        stream.destroy();
        reject(new TokenError(`the token endpoint's answer is over ${TOKEN_BODY_MAX} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stream.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }));
    stream.on("error", reject);
  });
}
