import { X509Certificate } from "node:crypto";
import type { EndpointAuth } from "@herald/contracts";
import { destinationOrigin, destinationType } from "@herald/contracts/destinations";
import { endpointAuthContext, Prisma, type SecretBox } from "@herald/db";
import { invalid } from "../../http/errors.ts";
import type { Schema } from "../../http/route.ts";
import { checkUrl, type UrlCredentials } from "./input.ts";
import { certificates, checkUsable, keyPem, pemOf, privateKey } from "./tlsMaterial.ts";

/**
 * How Herald authenticates to an endpoint: `tls` (a client certificate and key for mutual TLS,
 * and a CA to trust for its server) and `oauth2` (client credentials). The key and the client
 * secret are write-only: sealed with the rest in `auth_sealed`, opened by the senders only; the
 * API shows `auth`: what the certificates are, and the OAuth2 settings without the secret.
 */
export type TlsInput = {
  client_certificate?: string | null;
  client_key?: string | null;
  ca_certificate?: string | null;
} | null;
export type OAuth2Input = {
  token_url?: string;
  client_id?: string;
  client_secret?: string;
  scope?: string | null;
  audience?: string | null;
  client_auth?: "basic" | "post";
} | null;
export type AuthInput = { tls?: TlsInput; oauth2?: OAuth2Input };

const REDACTED = "[redacted]";
const PEM_MAX = 16_384;

type CertificateShown = { subject: string; issuer: string; not_after: string; fingerprint_sha256: string };
type AuthShown = {
  tls: {
    client_certificate: CertificateShown | null;
    client_key: typeof REDACTED | null;
    ca_certificate: CertificateShown | null;
  } | null;
  oauth2: {
    token_url: string;
    client_id: string;
    client_secret: typeof REDACTED;
    scope: string | null;
    audience: string | null;
    client_auth: "basic" | "post";
  } | null;
};

const shown = (c: X509Certificate): CertificateShown => ({
  subject: c.subject.replaceAll("\n", ", "),
  issuer: c.issuer.replaceAll("\n", ", "),
  not_after: new Date(c.validTo).toISOString(),
  fingerprint_sha256: c.fingerprint256,
});

/** The saved document, opened; empty when the endpoint has none. */
export function openAuth(secrets: SecretBox, e: { id: string; authSealed: string | null }): EndpointAuth {
  return e.authSealed ? JSON.parse(secrets.open(e.authSealed, endpointAuthContext(e.id))) : {};
}

/**
 * `tls` merged into what is saved: a field left out keeps its value, `null` removes it, and
 * `tls: null` removes all. A client certificate and its key go together, and must match.
 */
function mergeTls(sent: TlsInput, saved: EndpointAuth["tls"]): EndpointAuth["tls"] {
  if (sent === null) return undefined;
  const pick = (value: string | null | undefined, kept: string | undefined) =>
    value === undefined || value === REDACTED ? kept : (value ?? undefined);
  const next = {
    certificate: pick(sent.client_certificate, saved?.certificate),
    key: pick(sent.client_key, saved?.key),
    ca: pick(sent.ca_certificate, saved?.ca),
  };
  for (const [field, value] of [
    ["client_certificate", next.certificate],
    ["client_key", next.key],
    ["ca_certificate", next.ca],
  ] as const)
    if (value !== undefined && value.length > PEM_MAX)
      throw invalid(`tls.${field}`, `At most ${PEM_MAX} characters of PEM.`);
  if (next.certificate !== undefined && next.key === undefined)
    throw invalid("tls.client_key", "A client certificate needs its private key.");
  if (next.key !== undefined && next.certificate === undefined)
    throw invalid("tls.client_certificate", "A private key needs its client certificate.");
  if (next.certificate !== undefined && next.key !== undefined) {
    const chain = certificates(next.certificate, "tls.client_certificate");
    const key = privateKey(next.key, "tls.client_key");
    if (!chain[0]!.checkPrivateKey(key))
      throw invalid("tls.client_key", "This key is not the client certificate's.");
    if (new Date(chain[0]!.validTo) < new Date())
      throw invalid(
        "tls.client_certificate",
        `The client certificate expired at ${new Date(chain[0]!.validTo).toISOString()}.`,
      );
    next.certificate = pemOf(chain);
    next.key = keyPem(key);
  }
  if (next.ca !== undefined) next.ca = pemOf(certificates(next.ca, "tls.ca_certificate"));
  if (!next.certificate && !next.ca) return undefined;
  checkUsable(next);
  return next;
}

const secretKept = (sent: NonNullable<OAuth2Input>) =>
  sent.client_secret === undefined || sent.client_secret === REDACTED;

function originOf(url: string): string {
  try {
    return destinationOrigin(new URL(url));
  } catch {
    return url;
  }
}

/**
 * A token goes only where it was set for: a new URL on another origin (scheme, host, port)
 * needs the client secret sent again with it, or `oauth2: null`, or whoever may edit the
 * endpoint could point it at their own server and receive live tokens.
 */
export function checkTokenFollows(
  found: { url: string; auth: unknown },
  url: string,
  sent: OAuth2Input | undefined,
) {
  if (!shownAuth(found.auth).oauth2 || originOf(url) === originOf(found.url)) return;
  if (sent === null || (sent !== undefined && !secretKept(sent))) return;
  throw invalid(
    "oauth2.client_secret",
    "The URL moves to another origin: send the OAuth2 client secret again with it, or remove OAuth2 (`oauth2: null`): a token goes only where it was set for.",
  );
}

/**
 * A destination's credentials go only where they were set for: a URL sent back with
 * `[redacted]` as its user info keeps them only on the same destination (scheme, host and
 * port; for S3 the bucket and its server).
 */
export function checkCredentialsFollow(
  found: { url: string },
  saved: EndpointAuth,
  url: string,
  sent: UrlCredentials,
) {
  if (sent !== "kept") return;
  if (!saved.url_credentials)
    throw invalid(
      "url",
      "The URL's user info is `[redacted]`, but the endpoint has no saved credentials: send them.",
    );
  if (originOf(url) !== originOf(found.url))
    throw invalid(
      "url",
      "The URL moves to another destination: send its credentials again in the URL's user info (saved credentials go only where they were set for).",
    );
}

/**
 * HTTP's own authentication (`tls`, `oauth2`) is for webhooks; a destination beyond HTTP takes
 * its credentials in its URL.
 */
export function checkAuthFits(url: string, body: AuthInput) {
  if (destinationType(new URL(url)) === "http") return;
  for (const field of ["tls", "oauth2"] as const)
    if (body[field])
      throw invalid(
        field,
        `${field} is for http and https endpoints; a destination takes its credentials in its URL's user info.`,
      );
}

/** The URL as the API saves it (checkUrl's form), so the same URL written otherwise is the same. */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/**
 * `oauth2` merged into what is saved, as `tls` is; its token URL checked as endpoint URLs are.
 * The saved secret goes only to the token URL, and for the client id, it was set for: any other
 * token URL, on the same origin too (another path or query there may be a page that repeats
 * what it is sent into the attempt log), needs the secret sent again with it.
 */
function mergeOAuth2(sent: OAuth2Input, saved: EndpointAuth["oauth2"]): EndpointAuth["oauth2"] {
  if (sent === null) return undefined;
  const kept = secretKept(sent);
  const secret = kept ? saved?.client_secret : sent.client_secret;
  const next = {
    token_url: sent.token_url ?? saved?.token_url,
    client_id: sent.client_id ?? saved?.client_id,
    client_secret: secret,
    scope: sent.scope === undefined ? saved?.scope : (sent.scope ?? undefined),
    audience: sent.audience === undefined ? saved?.audience : (sent.audience ?? undefined),
    client_auth: sent.client_auth ?? saved?.client_auth ?? "basic",
  };
  for (const field of ["token_url", "client_id", "client_secret"] as const)
    if (!next[field]) throw invalid(`oauth2.${field}`, `oauth2 needs ${field}.`);
  const tokenUrl = checkUrl(next.token_url!, "oauth2.token_url");
  if (kept && (!sameUrl(tokenUrl, saved!.token_url) || next.client_id !== saved!.client_id))
    throw invalid(
      "oauth2.client_secret",
      "The token URL changes, or the client id does: send the client secret again with it (a saved secret goes only where it was set for).",
    );
  return { ...next, token_url: tokenUrl } as EndpointAuth["oauth2"];
}

/** What the API shows of a saved document. */
function show(auth: EndpointAuth): AuthShown {
  const t = auth.tls;
  const o = auth.oauth2;
  return {
    tls: t
      ? {
          client_certificate: t.certificate ? shown(new X509Certificate(t.certificate)) : null,
          client_key: t.key ? REDACTED : null,
          ca_certificate: t.ca ? shown(new X509Certificate(t.ca)) : null,
        }
      : null,
    oauth2: o
      ? {
          token_url: o.token_url,
          client_id: o.client_id,
          client_secret: REDACTED,
          scope: o.scope ?? null,
          audience: o.audience ?? null,
          client_auth: o.client_auth ?? "basic",
        }
      : null,
  };
}

/**
 * The columns for `body`'s `tls` and `oauth2`, and a new URL's `credentials`, over what `saved`
 * holds (nothing when it changes none): the sealed document, and what is shown of it.
 */
export function authColumns(
  secrets: SecretBox,
  endpointId: string,
  body: AuthInput,
  saved: EndpointAuth,
  credentials?: UrlCredentials,
): { auth: Prisma.InputJsonValue | typeof Prisma.DbNull; authSealed: string | null } | null {
  if (body.tls === undefined && body.oauth2 === undefined && credentials === undefined) return null;
  const next: EndpointAuth = {
    url_credentials:
      credentials === undefined || credentials === "kept"
        ? saved.url_credentials
        : (credentials ?? undefined),
    tls: body.tls === undefined ? saved.tls : mergeTls(body.tls, saved.tls),
    oauth2: body.oauth2 === undefined ? saved.oauth2 : mergeOAuth2(body.oauth2, saved.oauth2),
  };
  if (!next.url_credentials) delete next.url_credentials;
  if (!next.tls) delete next.tls;
  if (!next.oauth2) delete next.oauth2;
  if (!next.tls && !next.oauth2 && !next.url_credentials) return { auth: Prisma.DbNull, authSealed: null };
  return {
    auth: show(next) as Prisma.InputJsonValue,
    authSealed: secrets.seal(JSON.stringify(next), endpointAuthContext(endpointId)),
  };
}

/** The endpoint object's `tls` and `oauth2`. */
export const shownAuth = (auth: unknown) => {
  const a = (auth ?? {}) as Partial<AuthShown>;
  return { tls: a.tls ?? null, oauth2: a.oauth2 ?? null };
};

const pem = (what: string): Schema => ({
  type: ["string", "null"],
  maxLength: PEM_MAX,
  description: `${what} PEM text.`,
});

export const authFields: Record<string, Schema> = {
  tls: {
    type: ["object", "null"],
    additionalProperties: false,
    description:
      "Mutual TLS: a client certificate and its private key (unencrypted), which Herald presents to the endpoint; and `ca_certificate`, the certificates to trust for the endpoint's server instead of the public roots (not for the token URL). PEM text around the blocks is dropped, and what is saved is re-encoded. The key, RSA of 2048 to 4096 bits, EC on P-256, P-384 or P-521, or Ed25519, is write-only: sealed at rest and in messages. In an update a field left out keeps its value (as does `[redacted]`), `null` removes it, and `tls: null` removes all.",
    properties: {
      client_certificate: pem("The client certificate, the leaf first, then any intermediates:"),
      client_key: pem("Its private key, unencrypted (PKCS#8, PKCS#1 or SEC1), write-only:"),
      ca_certificate: pem("One or more certificates to trust for the endpoint's server:"),
    },
  },
  oauth2: {
    type: ["object", "null"],
    additionalProperties: false,
    description:
      "OAuth2 client credentials: Herald fetches a token from `token_url` (grant `client_credentials`), caches it until it expires, sends it as `Authorization: Bearer`, and on a `401` fetches a new one and tries once more. The client secret is write-only. In an update a field left out keeps its value, and `oauth2: null` removes it; any other `token_url` (another path or query too) or `client_id`, or a new endpoint `url` origin, needs `client_secret` sent again. A token server that refuses, or answers something other than a bearer token, fails the attempt with error `auth_error` (of a refusal, `response_body` holds its status and its `error` and `error_description`, cut short, with the credentials sent scrubbed; never its body); one that cannot be reached, with the error of that (`timeout`, `connection_error`, ...), which counts toward pausing the endpoint as its own would.",
    properties: {
      token_url: { type: "string", minLength: 1, maxLength: 2048, description: "An http or https URL." },
      client_id: { type: "string", minLength: 1, maxLength: 512 },
      client_secret: { type: "string", minLength: 1, maxLength: 4096, description: "Write-only." },
      scope: { type: ["string", "null"], maxLength: 1024 },
      audience: {
        type: ["string", "null"],
        maxLength: 1024,
        description: "Sent as `audience`, for token servers that ask for it (Auth0 and others).",
      },
      client_auth: {
        enum: ["basic", "post"],
        description:
          "`basic` (the default): the client id and secret in HTTP Basic; `post`: in the form body.",
      },
    },
  },
};

const certificateShownSchema: Schema = {
  type: ["object", "null"],
  required: ["subject", "issuer", "not_after", "fingerprint_sha256"],
  properties: {
    subject: { type: "string" },
    issuer: { type: "string" },
    not_after: { type: "string", format: "date-time" },
    fingerprint_sha256: { type: "string" },
  },
};

export const authShownSchemas: Record<string, Schema> = {
  tls: {
    type: ["object", "null"],
    required: ["client_certificate", "client_key", "ca_certificate"],
    description: "Mutual TLS, as saved: what the certificates are; the key is never shown.",
    properties: {
      client_certificate: certificateShownSchema,
      client_key: { type: ["string", "null"], enum: [REDACTED, null] },
      ca_certificate: certificateShownSchema,
    },
  },
  oauth2: {
    type: ["object", "null"],
    required: ["token_url", "client_id", "client_secret", "scope", "audience", "client_auth"],
    description: "OAuth2 client credentials, as saved; the secret is never shown.",
    properties: {
      token_url: { type: "string" },
      client_id: { type: "string" },
      client_secret: { const: REDACTED },
      scope: { type: ["string", "null"] },
      audience: { type: ["string", "null"] },
      client_auth: { enum: ["basic", "post"] },
    },
  },
};
