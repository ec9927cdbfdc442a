import { createHash } from "node:crypto";
import type { EndpointAuth } from "@herald/contracts";
import type { Got } from "got";
import { blockedLiteral } from "./destinations.ts";

type OAuth2 = NonNullable<EndpointAuth["oauth2"]>;

/**
 * OAuth2 client credentials (RFC 6749 §4.4) for endpoints that want a bearer token: fetched
 * from the endpoint's token URL, cached in this sender until shortly before it expires, and
 * fetched again when the endpoint answers 401 (the caller asks with `fresh`).
 *
 * One endpoint's token server cannot hold up another's deliveries: a fetch is bounded by the
 * attempt's own time and reads at most TOKEN_BODY_MAX bytes; attempts of one endpoint waiting
 * for a token share one fetch; the token URL goes through the same SSRF guard and egress as
 * webhooks (the caller's got client); and the cache holds CACHE_MAX tokens at most.
 */
export class TokenError extends Error {
  readonly code = "HERALD_AUTH_ERROR";
}

/** A token server's answer is read this far at most. */
const TOKEN_BODY_MAX = 65_536;
/** Tokens kept at most; past it, the oldest goes. */
const CACHE_MAX = 10_000;
/** A token is fetched again this long before it expires (or a tenth of its life, if shorter). */
const EARLY_MS = 30_000;
/** A token whose answer says no `expires_in` is kept this long (a 401 replaces it sooner). */
const UNKNOWN_LIFE_MS = 300_000;

type Cached = { token: string; expiresAt: number };

export class TokenCache {
  private readonly tokens = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();

  /** The endpoint's token: cached, unless `fresh` (the endpoint refused the cached one). */
  async token(
    endpointId: string,
    config: OAuth2,
    client: Got,
    allowPrivate: boolean,
    fresh: boolean,
    signal?: AbortSignal,
  ): Promise<string> {
    // Keyed by the settings too: a new secret or scope is a new token.
    const key = `${endpointId}:${createHash("sha256").update(JSON.stringify(config)).digest("base64url")}`;
    const cached = this.tokens.get(key);
    if (fresh && cached) this.tokens.delete(key);
    else if (cached && cached.expiresAt > Date.now()) return cached.token;
    let fetching = this.pending.get(key);
    if (!fetching) {
      fetching = fetchToken(config, client, allowPrivate, signal).finally(() => this.pending.delete(key));
      this.pending.set(key, fetching);
    }
    const got = await fetching;
    this.tokens.delete(key);
    this.tokens.set(key, got);
    if (this.tokens.size > CACHE_MAX) this.tokens.delete(this.tokens.keys().next().value!);
    return got.token;
  }
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
    // RFC 6749 §2.3.1: each part form-encoded before Basic.
    const part = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
    headers.authorization = `Basic ${Buffer.from(`${part(config.client_id)}:${part(config.client_secret)}`).toString("base64")}`;
  } else {
    form.set("client_id", config.client_id);
    form.set("client_secret", config.client_secret);
  }
  const res = await readLimited(client, url, headers, form.toString(), signal);
  const problem = (why: string) =>
    new TokenError(`the token endpoint ${why}${res.body ? `: ${res.body.slice(0, 512)}` : ""}`);
  if (res.status < 200 || res.status >= 300) throw problem(`answered HTTP ${res.status}`);
  let answer: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
  try {
    answer = JSON.parse(res.body);
  } catch {
    throw problem("answered something other than JSON");
  }
  if (typeof answer.access_token !== "string" || !answer.access_token || answer.access_token.length > 8192)
    throw problem("gave no access_token");
  if (/[\r\n]/.test(answer.access_token)) throw problem("gave an access_token that is not a header value");
  if (typeof answer.token_type === "string" && answer.token_type.toLowerCase() !== "bearer")
    throw problem(`gave a token of type ${answer.token_type.slice(0, 32)}, not bearer`);
  const life =
    typeof answer.expires_in === "number" && answer.expires_in > 0
      ? answer.expires_in * 1000
      : UNKNOWN_LIFE_MS;
  return { token: answer.access_token, expiresAt: Date.now() + life - Math.min(EARLY_MS, life / 10) };
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
