import { covers } from "@herald/contracts/scopes";
import { newId, type Prisma } from "@herald/db";
import type { AuditBy } from "../../audit/record.ts";
import type { Account, Ctx } from "../../context.ts";
import { insufficientScope } from "../../http/access.ts";
import { unauthenticated } from "../../http/errors.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import {
  authenticateSession,
  checkSameSite,
  cookieName,
  cookieValue,
  newSecret,
  PAGE_HEADER,
  type Page,
  pageOf,
  secureCookies,
  sessionCookie,
  sessionHash,
} from "../../http/session.ts";
import { checkAppReach, iso, resolveApp, timestamp, withLiveApp } from "../common.ts";

/**
 * Portal sessions (one app, for that customer) and dashboard sessions (the account holder),
 * each a link valid for a limited time. See http/session.ts for how the link becomes a cookie.
 */
const expiresIn: Schema = {
  type: "integer",
  minimum: 60,
  maximum: 604_800,
  default: 3600,
  description: "Seconds the link and its session stay valid: 60 s to 7 days (default 1 hour).",
};

export const sessionSchemas: Record<string, Schema> = {
  PortalSession: {
    type: "object",
    required: ["id", "object", "app", "url", "token", "expires_at", "read_only"],
    properties: {
      id: { type: "string", examples: ["ses_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "portal_session" },
      app: { type: "string" },
      url: {
        type: "string",
        description: "The link that opens the portal for this app. Its token is in the URL fragment.",
      },
      token: {
        type: "string",
        description: "The same token, to build a link of your own: `<base>/portal#token=<token>`.",
      },
      expires_at: timestamp,
      read_only: { type: "boolean" },
    },
  },
  DashboardSession: {
    type: "object",
    required: ["id", "object", "url", "token", "expires_at"],
    properties: {
      id: { type: "string" },
      object: { const: "dashboard_session" },
      url: { type: "string" },
      token: { type: "string" },
      expires_at: timestamp,
    },
  },
  Session: {
    type: "object",
    required: ["object", "kind", "app", "read_only", "scopes", "person", "expires_at"],
    properties: {
      object: { const: "session" },
      kind: { enum: ["portal", "dashboard"] },
      app: { type: ["string", "null"] },
      read_only: { type: "boolean" },
      person: {
        type: ["string", "null"],
        description:
          "The email of the person signed in by single sign-on; null for a session a key or a link opened.",
      },
      scopes: {
        type: ["array", "null"],
        items: { type: "string" },
        description:
          "A dashboard session's scopes, those of what opened it: the dashboard offers only what they cover. Null for a portal session, which `read_only` limits.",
      },
      expires_at: timestamp,
    },
  },
};

type Made = { id: string; token: string; expiresAt: Date };

async function makeSession(
  { account, deps, audit }: Pick<Ctx, "account" | "deps" | "audit">,
  kind: "portal" | "dashboard",
  appId: string | null,
  seconds: number,
  readOnly: boolean,
): Promise<Made> {
  const token = newSecret();
  // Nothing a browser session makes outlives it: a portal link made from the dashboard ends
  // when that dashboard session does, at the latest, and comes from the same key.
  // Nor does it outlive the key that made it, nor hold more than it: a dashboard session holds
  // the scopes of the key or the dashboard session that opened it.
  const parent = account.session;
  const ends = [new Date(Date.now() + seconds * 1000), parent?.expiresAt, account.expiresAt];
  const expiresAt = new Date(Math.min(...ends.filter((d) => d !== undefined).map((d) => d.getTime())));
  const create = async (tx: Prisma.TransactionClient) => {
    const row = await tx.session.create({
      data: {
        id: newId("session"),
        accountId: account.id,
        appId,
        kind,
        tokenHash: sessionHash(token),
        readOnly,
        expiresAt,
        keyId: parent ? parent.keyId : account.keyId || null,
        parentId: parent?.id ?? null,
        scopes: kind === "dashboard" ? [...(account.scopes ?? [])] : [],
      },
    });
    await audit(tx, { type: `${kind}_session`, id: row.id });
    return row;
  };
  // A portal session of an app being deleted is not made, or is revoked with the app's others.
  const row = appId
    ? await withLiveApp(deps.prisma, { id: appId, ref: appId, param: "app" }, create)
    : await deps.prisma.$transaction(create);
  return { id: row.id, token, expiresAt };
}

const byApp = { app: "The app's id or uid." };

/**
 * A portal link can do what the portal does in its app: read its endpoints, events and attempts,
 * and, unless read-only, change endpoints and send test events. Whoever makes one must hold that
 * much: `portal` alone hands on nothing it does not have.
 */
function checkPortalGrant(account: Account, readOnly: boolean): void {
  if (account.via === "portal") return;
  const needs = readOnly
    ? (["endpoints:read", "events:read"] as const)
    : (["endpoints:write", "events:write"] as const);
  const lacking = needs.find((scope) => !covers(account.scopes ?? [], scope));
  if (lacking)
    throw insufficientScope(
      account,
      lacking,
      readOnly ? "to make a read-only portal link" : "to make a portal link",
    );
}

/** A session opening or ending itself, as the audit log names it. */
const sessionActor = (row: { id: string; accountId: string; kind: string }): AuditBy => ({
  accountId: row.accountId,
  actor: { type: row.kind === "portal" ? "portal_session" : "dashboard_session", id: row.id },
});

const pageHeader = {
  "Herald-Page":
    "`portal` or `dashboard`: the page calling, which the portal and the dashboard send with every call. A session of the other kind is then refused (`401`, saying so) rather than used, and left as it is: both pages share one cookie in a browser.",
};

/** The page a link is for, to say so when it was opened on the other one. */
const WRONG_LINK: Record<Page, string> = {
  portal: "This is a dashboard sign-in link, not a portal link: open it under /dashboard.",
  dashboard: "This is a customer portal link, not a dashboard sign-in link: open it under /portal.",
};

/** Cookies are Secure, and `__Host-` named, when browsers reach the gateway over https. */

export const sessionRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/apps/{app}/portal-sessions",
    auth: "account",
    scope: "portal",
    oneApp: true,
    audit: "portal_session.created",
    tag: "Sessions",
    summary: "Create a portal session",
    description:
      "A link that opens the customer portal for this one app, valid for `expires_in` seconds. The portal can do what it shows for this app and nothing else; `read_only` limits it to reading. Besides `portal`, the caller must hold what the link can do: `endpoints:write` and `events:write`, or for a read-only link `endpoints:read` and `events:read`.",
    params: byApp,
    body: {
      type: "object",
      additionalProperties: false,
      properties: { expires_in: expiresIn, read_only: { type: "boolean", default: false } },
    },
    response: { status: 201, schema: ref("PortalSession"), description: "The session and its link." },
    async handler(ctx: Ctx<{ app: string }, object, { expires_in: number; read_only: boolean }>) {
      const app = await resolveApp(ctx.deps.prisma, ctx.account.id, ctx.params.app, "app");
      checkAppReach(ctx.account, app.id, "app", ctx.params.app, "app");
      checkPortalGrant(ctx.account, ctx.body.read_only);
      const made = await makeSession(ctx, "portal", app.id, ctx.body.expires_in, ctx.body.read_only);
      return {
        status: 201,
        body: {
          id: made.id,
          object: "portal_session",
          app: app.id,
          url: `${ctx.deps.config.publicUrl}/portal#token=${made.token}`,
          token: made.token,
          expires_at: iso(made.expiresAt),
          read_only: ctx.body.read_only,
        },
      };
    },
  },
  {
    method: "delete",
    path: "/v3/apps/{app}/portal-sessions",
    auth: "account",
    scope: "portal",
    oneApp: true,
    audit: "portal_sessions.revoked",
    tag: "Sessions",
    summary: "Revoke an app's portal sessions",
    description: "Every portal session of the app ends now, links not yet opened included.",
    params: byApp,
    response: {
      status: 200,
      schema: {
        type: "object",
        required: ["object", "app", "revoked"],
        properties: {
          object: { const: "portal_session_revocation" },
          app: { type: "string" },
          revoked: { type: "integer" },
        },
      },
      description: "How many sessions were revoked.",
    },
    async handler({ account, params, deps, audit }: Ctx<{ app: string }>) {
      const app = await resolveApp(deps.prisma, account.id, params.app, "app");
      checkAppReach(account, app.id, "app", params.app, "app");
      const { count } = await deps.prisma.$transaction(async (tx) => {
        await audit(tx, { type: "app", id: app.id });
        return tx.session.updateMany({
          where: { appId: app.id, kind: "portal", revokedAt: null },
          data: { revokedAt: new Date() },
        });
      });
      return { body: { object: "portal_session_revocation", app: app.id, revoked: count } };
    },
  },
  {
    method: "post",
    path: "/v3/dashboard-sessions",
    auth: "account",
    scope: "any",
    audit: "dashboard_session.created",
    apiKeyOnly: true,
    tag: "Sessions",
    summary: "Create a dashboard session",
    description:
      "A link that signs a browser in to the account's dashboard, valid for `expires_in` seconds. Only an API key may make one: a browser session gets a `403`, so a dashboard session cannot extend itself. A dashboard session holds the scopes of the key that made it, and ends with the key's expiry at the latest; it never makes or revokes API keys, nor makes dashboard links.",
    body: { type: "object", additionalProperties: false, properties: { expires_in: expiresIn } },
    response: { status: 201, schema: ref("DashboardSession"), description: "The session and its link." },
    async handler(ctx: Ctx<object, object, { expires_in: number }>) {
      const made = await makeSession(ctx, "dashboard", null, ctx.body.expires_in, false);
      return {
        status: 201,
        body: {
          id: made.id,
          object: "dashboard_session",
          url: `${ctx.deps.config.publicUrl}/dashboard#token=${made.token}`,
          token: made.token,
          expires_at: iso(made.expiresAt),
        },
      };
    },
  },
  {
    method: "post",
    path: "/session",
    auth: "none",
    audit: "session.opened",
    tag: "Sessions",
    summary: "Open a session",
    description:
      "Exchanges a session link's token, once, for an HttpOnly, SameSite=Strict cookie. The portal and the dashboard call this on first load. With `Herald-Page`, a link of the other kind is refused (`401`) and stays unused.",
    headers: pageHeader,
    body: {
      type: "object",
      additionalProperties: false,
      required: ["token"],
      properties: { token: { type: "string", minLength: 1, maxLength: 200 } },
    },
    response: { status: 200, schema: ref("Session"), description: "The session; the cookie is set." },
    async handler({ body, deps, req, audit }: Ctx<object, object, { token: string }>) {
      // Another site's form could post its own link's token: the victim would then work in
      // the attacker's portal, believing it theirs (login CSRF).
      checkSameSite(req, deps.config.publicUrl);
      const cookie = newSecret();
      const now = new Date();
      const page = pageOf(req.headers[PAGE_HEADER]);
      const usable = {
        tokenHash: sessionHash(body.token),
        tokenUsedAt: null,
        revokedAt: null,
        expiresAt: { gt: now },
      };
      // One exchange per token: a leaked link that was already opened opens nothing. A link
      // opened on the other page is left unused, to open where it belongs.
      const opened = await deps.prisma.$transaction(async (tx) => {
        const { count } = await tx.session.updateMany({
          where: { ...usable, ...(page ? { kind: page } : {}) },
          data: { tokenUsedAt: now, cookieHash: sessionHash(cookie) },
        });
        if (!count) return null;
        const row = await tx.session.findUniqueOrThrow({ where: { cookieHash: sessionHash(cookie) } });
        await audit(tx, { type: `${row.kind}_session`, id: row.id }, sessionActor(row));
        return row;
      });
      if (!opened) {
        const other = page ? await deps.prisma.session.findFirst({ where: usable }) : null;
        throw unauthenticated(
          other && page
            ? WRONG_LINK[page]
            : "This link is invalid, expired, or was already opened. Ask for a new one.",
        );
      }
      const session = opened;
      const secure = secureCookies(deps.config);
      return {
        headers: {
          "Set-Cookie": sessionCookie(cookie, (session.expiresAt.getTime() - now.getTime()) / 1000, secure),
          "Cache-Control": "no-store",
        },
        body: {
          object: "session",
          kind: session.kind,
          app: session.appId,
          read_only: session.readOnly,
          scopes: session.kind === "dashboard" ? (session.scopes ?? []) : null,
          person: session.personEmail,
          expires_at: iso(session.expiresAt),
        },
      };
    },
  },
  {
    method: "get",
    path: "/session",
    auth: "none",
    tag: "Sessions",
    summary: "The browser's session",
    description:
      "The session of the cookie sent: what the portal or dashboard shows after a reload. `204` with no body when no session cookie was sent; `401` when the session ended or expired, or is of the other kind than `Herald-Page`.",
    headers: pageHeader,
    response: { status: 200, schema: ref("Session"), description: "The session." },
    async handler({ req, deps }: Ctx) {
      const cookie = cookieValue(req.headers.cookie, cookieName(secureCookies(deps.config)));
      if (!cookie) return { status: 204, headers: { "Cache-Control": "no-store" }, body: undefined };
      const account = await authenticateSession(deps.prisma, cookie, pageOf(req.headers[PAGE_HEADER]));
      return {
        headers: { "Cache-Control": "no-store" },
        body: {
          object: "session",
          kind: account.via,
          app: account.via === "portal" ? account.appId : null,
          read_only: account.readOnly === true,
          scopes: account.via === "dashboard" ? (account.scopes ?? []) : null,
          person: account.person?.email ?? null,
          expires_at: iso(account.session?.expiresAt ?? null),
        },
      };
    },
  },
  {
    method: "delete",
    path: "/session",
    auth: "none",
    audit: "session.ended",
    tag: "Sessions",
    summary: "End the browser's session",
    description:
      "Revokes the session of the cookie sent, and clears the cookie. With `Herald-Page`, a session of the other kind is left alone (`deleted: false`): signing out of one page does not sign the browser out of the other.",
    headers: pageHeader,
    response: {
      status: 200,
      schema: {
        type: "object",
        required: ["object", "deleted"],
        properties: { object: { const: "session" }, deleted: { type: "boolean" } },
      },
      description: "Whether a session was ended.",
    },
    async handler({ req, deps, audit }: Ctx) {
      checkSameSite(req, deps.config.publicUrl);
      const secure = secureCookies(deps.config);
      const cookie = cookieValue(req.headers.cookie, cookieName(secure));
      const page = pageOf(req.headers[PAGE_HEADER]);
      const session =
        cookie && page
          ? await deps.prisma.session.findUnique({ where: { cookieHash: sessionHash(cookie) } })
          : null;
      if (session && session.kind !== page) return { body: { object: "session", deleted: false } };
      const { count } = cookie
        ? await deps.prisma.$transaction(async (tx) => {
            const ended = await tx.session.updateMany({
              where: { cookieHash: sessionHash(cookie), revokedAt: null },
              data: { revokedAt: new Date() },
            });
            const row = ended.count
              ? await tx.session.findUnique({ where: { cookieHash: sessionHash(cookie) } })
              : null;
            if (row) await audit(tx, { type: `${row.kind}_session`, id: row.id }, sessionActor(row));
            return ended;
          })
        : { count: 0 };
      return {
        headers: { "Set-Cookie": sessionCookie("", 0, secure) },
        body: { object: "session", deleted: count > 0 },
      };
    },
  },
];
