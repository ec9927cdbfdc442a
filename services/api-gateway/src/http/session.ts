import { createHash, randomBytes } from "node:crypto";
import type { PrismaClient } from "@herald/db";
import type { Request } from "express";
import type { Account } from "../context.ts";
import { ApiError, unauthenticated } from "./errors.ts";
import type { RouteSpec } from "./route.ts";

/**
 * Browser sessions for the portal and the dashboard. A session's link carries a token in its
 * URL fragment (never sent to a server, so never in a log or a referrer); the page exchanges
 * it once, at POST /session, for an HttpOnly, SameSite=Strict cookie. Only SHA-256 hashes of
 * the token and the cookie are stored.
 */
export const SESSION_COOKIE = "herald_session";

/**
 * The cookie's name: on https `__Host-herald_session`, which a browser only accepts as Secure,
 * for this host and path `/`, so no sibling subdomain can set or shadow it. Plain http (local
 * use) cannot have the prefix.
 */
export const cookieName = (secure: boolean) => (secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE);

/** Whether cookies are Secure (and `__Host-`): when the gateway's public URL is https. */
export const secureCookies = (config: { publicUrl: string }) => config.publicUrl.startsWith("https:");

export const sessionHash = (secret: string) => createHash("sha256").update(secret).digest("hex");
export const newSecret = () => randomBytes(32).toString("base64url");

/** The cookie's value as sent: secrets are base64url, so one that needs decoding is no secret of ours. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

export function sessionCookie(secret: string, maxAgeSeconds: number, secure: boolean): string {
  return `${cookieName(secure)}=${secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}${secure ? "; Secure" : ""}`;
}

const crossSite = (message: string) =>
  new ApiError(403, "invalid_request_error", "cross_site_request", message);

/**
 * Refuses a browser write that another site's page could have made: the session cookie rides
 * with it, and SameSite is the browser's promise, not the server's check. The portal and the
 * dashboard send `Herald-Page` (a header no form can set, and no other origin may send without
 * a CORS preflight, which this server never answers) and their browser sends `Origin`, which
 * must be this host's or PUBLIC_URL's.
 */
export function checkSameSite(req: Request, publicUrl: string): void {
  if (!pageOf(req.headers[PAGE_HEADER]))
    throw crossSite(
      "A browser request that changes something must come from the portal or the dashboard (Herald-Page).",
    );
  const origin = req.headers.origin;
  let host: string | null = null;
  try {
    host = origin ? new URL(origin).host : null;
  } catch {
    host = null;
  }
  if (!host || (host !== req.headers.host && origin !== new URL(publicUrl).origin))
    throw crossSite("This request comes from another site's page; it was refused.");
}

/**
 * The page a browser request comes from: the portal and the dashboard send `Herald-Page` with
 * every call. Both share the one cookie, so opening a customer's portal link replaces the
 * dashboard's session in that browser (and the other way round): a page that finds a session
 * of the other kind is told so (401) instead of silently working as the other one.
 */
export type Page = "portal" | "dashboard";
export const PAGE_HEADER = "herald-page";

export function pageOf(header: string | string[] | undefined): Page | undefined {
  return header === "portal" || header === "dashboard" ? header : undefined;
}

const OTHER_SESSION: Record<Page, string> = {
  dashboard: "This browser opened a customer portal since; sign in to the dashboard again.",
  portal: "This browser signed in to the Herald dashboard since; open a new portal link.",
};

/** A 401 when a page's request carries a session of the other kind. */
export function checkPage(kind: string, page: Page | undefined): void {
  if (page && kind !== page) throw unauthenticated(OTHER_SESSION[page]);
}

/**
 * The account behind a session cookie, limited as the session is; a 401 when it is not valid,
 * or, on a request from `page`, of the other kind.
 */
export async function authenticateSession(
  prisma: Pick<PrismaClient, "$queryRaw">,
  cookie: string,
  page?: Page,
): Promise<Account> {
  // One query: the session, and whether what it came from still stands. A key revoked, or the
  // dashboard session that made it ended (signed out, revoked), ends it too, even when it was
  // made in the moment of the revocation.
  const [session] = await prisma.$queryRaw<SessionRow[]>`
    SELECT s.id, s.account_id AS "accountId", s.app_id AS "appId", s.kind, s.read_only AS "readOnly",
           s.expires_at AS "expiresAt", s.key_id AS "keyId", coalesce(s.scopes, '{}') AS scopes, s.person_email AS "personEmail",
           s.revoked_at IS NOT NULL
             OR (s.key_id IS NOT NULL AND (k.id IS NULL OR k.revoked_at IS NOT NULL))
             OR (s.parent_id IS NOT NULL AND (p.id IS NULL OR p.revoked_at IS NOT NULL)) AS ended
    FROM sessions s
    LEFT JOIN api_keys k ON k.id = s.key_id
    LEFT JOIN sessions p ON p.id = s.parent_id
    WHERE s.cookie_hash = ${sessionHash(cookie)}`;
  if (!session || session.ended) throw unauthenticated("This session has ended. Open a new link.");
  if (session.expiresAt <= new Date()) throw unauthenticated("This session has expired. Open a new link.");
  checkPage(session.kind, page);
  const own = { id: session.id, expiresAt: session.expiresAt, keyId: session.keyId };
  return session.kind === "portal"
    ? {
        id: session.accountId,
        keyId: "",
        via: "portal",
        appId: session.appId ?? "",
        readOnly: session.readOnly,
        session: own,
      }
    : {
        id: session.accountId,
        keyId: "",
        via: "dashboard",
        scopes: session.scopes,
        session: own,
        ...(session.personEmail ? { person: { email: session.personEmail } } : {}),
      };
}

type SessionRow = {
  id: string;
  accountId: string;
  appId: string | null;
  kind: string;
  readOnly: boolean;
  expiresAt: Date;
  keyId: string | null;
  scopes: string[];
  personEmail: string | null;
  ended: boolean;
};

/**
 * A portal session may use only the routes the portal shows (and only reads when read-only);
 * a dashboard session every route but those that make or revoke credentials.
 */
export function checkSessionAllows(account: Account, route: RouteSpec): void {
  if (account.via === "dashboard" && route.apiKeyOnly) {
    throw new ApiError(
      403,
      "invalid_request_error",
      "forbidden",
      "A dashboard session cannot make or revoke credentials: use an API key.",
    );
  }
  if (account.via !== "portal") return;
  const allowed = route.portal === "write" || (route.portal === "read" && route.method === "get");
  // Read-only: the routes marked `read`, which reveal no secret.
  if (!allowed || (account.readOnly && route.portal !== "read")) {
    throw new ApiError(
      403,
      "invalid_request_error",
      "forbidden",
      "A portal session cannot use this operation.",
    );
  }
}
