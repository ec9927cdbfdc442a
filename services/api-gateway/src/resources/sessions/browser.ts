import type { AuditBy } from "../../audit/record.ts";
import type { Ctx } from "../../context.ts";
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
import { iso, timestamp } from "../common.ts";

/**
 * The browser's own session (`/session`): a link's token exchanged once for a cookie (a
 * sign-in), read back after a reload, and ended (a sign-out). Only the portal's and the
 * dashboard's pages call these. See http/session.ts for the cookie.
 */
export const browserSessionSchemas: Record<string, Schema> = {
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

export const browserSessionRoutes: RouteSpec[] = [
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
