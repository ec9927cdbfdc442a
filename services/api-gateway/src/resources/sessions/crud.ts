import { covers } from "@herald/contracts/scopes";
import { newId, type Prisma } from "@herald/db";
import type { Account, Ctx } from "../../context.ts";
import { insufficientScope } from "../../http/access.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { newSecret, sessionHash } from "../../http/session.ts";
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
];
