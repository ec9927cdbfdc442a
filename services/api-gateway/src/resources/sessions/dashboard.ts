import { beyond, type Scope } from "@herald/contracts/scopes";
import { isId } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { insufficientScope } from "../../http/access.ts";
import { notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, type Schema } from "../../http/route.ts";
import { deleted, deletedSchema, iso, nullableTimestamp, timestamp } from "../common.ts";

/**
 * The account's dashboard sign-ins, listed and revoked: a link given to the wrong person, or a
 * browser left signed in, can be ended without revoking the key that made it. Ending one ends
 * the portal sessions it made.
 */
type Row = {
  id: string;
  keyId: string | null;
  scopes: string[] | null;
  tokenUsedAt: Date | null;
  expiresAt: Date;
  createdAt: Date;
};

const serialize = (s: Row) => ({
  id: s.id,
  object: "dashboard_session" as const,
  api_key: s.keyId,
  scopes: s.scopes ?? [],
  opened_at: iso(s.tokenUsedAt),
  created_at: iso(s.createdAt),
  expires_at: iso(s.expiresAt),
});

export const dashboardSessionSchemas: Record<string, Schema> = {
  DashboardSessionListed: {
    type: "object",
    required: ["id", "object", "api_key", "scopes", "opened_at", "created_at", "expires_at"],
    properties: {
      id: { type: "string" },
      object: { const: "dashboard_session" },
      api_key: { type: ["string", "null"], description: "The API key that made the link." },
      scopes: {
        type: "array",
        items: { type: "string" },
        description: "What the session may do: the scopes of the key, or the person's role, that opened it.",
      },
      opened_at: { ...nullableTimestamp, description: "When a browser opened the link; null while unused." },
      created_at: timestamp,
      expires_at: timestamp,
    },
  },
};

export const dashboardSessionRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/dashboard-sessions",
    auth: "account",
    scope: "keys",
    tag: "Sessions",
    summary: "List dashboard sessions",
    description: "The dashboard sessions that have not ended (revoked or expired), newest first.",
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("DashboardSessionListed"), description: "A page of sessions." },
    async handler({ account, query, deps }: Ctx<object, PageQuery>) {
      const cursor = await cursorOf(query, (id) => (isId("session", id) ? id : null));
      const rows = await deps.prisma.session.findMany({
        where: {
          accountId: account.id,
          kind: "dashboard",
          revokedAt: null,
          expiresAt: { gt: new Date() },
          ...(cursor.id ? { id: cursor.id } : {}),
        },
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serialize) } };
    },
  },
  {
    method: "delete",
    path: "/v3/dashboard-sessions/{id}",
    auth: "account",
    scope: "keys",
    audit: "dashboard_session.revoked",
    tag: "Sessions",
    summary: "Revoke a dashboard session",
    description:
      "The session ends now, its link too if not yet opened, and so does every portal session it made.",
    params: { id: "The session's id." },
    response: { status: 200, schema: deletedSchema("dashboard_session"), description: "It ended." },
    async handler({ account, params, deps, audit }: Ctx<{ id: string }>) {
      if (!isId("session", params.id)) throw notFound("dashboard session", params.id);
      await deps.prisma.$transaction(async (tx) => {
        const now = new Date();
        // Only a session holding no scope the caller lacks: `keys` alone does not sign an
        // administrator out.
        const target = await tx.session.findFirst({
          where: { id: params.id, accountId: account.id, kind: "dashboard" },
          select: { scopes: true },
        });
        const above = target ? beyond(account.scopes ?? [], (target.scopes ?? []) as Scope[]) : [];
        if (above.length) throw insufficientScope(account, above[0]!, "to end a session that holds it");
        const ended = await tx.session.updateMany({
          where: { id: params.id, accountId: account.id, kind: "dashboard", revokedAt: null },
          data: { revokedAt: now },
        });
        if (!ended.count) throw notFound("dashboard session", params.id);
        await tx.session.updateMany({
          where: { accountId: account.id, parentId: params.id, revokedAt: null },
          data: { revokedAt: now },
        });
        await audit(tx, { type: "dashboard_session", id: params.id });
      });
      return { body: deleted(params.id, "dashboard_session") };
    },
  },
];
