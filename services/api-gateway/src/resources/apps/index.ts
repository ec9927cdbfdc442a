import { isId, newId } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { ApiError, conflict, invalid, notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { checkAppReach, deleted, deletedSchema, iso, resolveApp, timestamp } from "../common.ts";

type AppRow = { id: string; uid: string | null; name: string; createdAt: Date; updatedAt: Date };

export const serializeApp = (a: AppRow) => ({
  id: a.id,
  object: "app" as const,
  uid: a.uid,
  name: a.name,
  created_at: iso(a.createdAt),
  updated_at: iso(a.updatedAt),
});

const uid: Schema = {
  type: "string",
  minLength: 1,
  maxLength: 256,
  pattern: "^[A-Za-z0-9._-]+$",
  description:
    "Your own id for this customer, unique in your account: 1 to 256 of A-Z a-z 0-9 . _ -, not starting with app_.",
};
const name: Schema = {
  type: "string",
  minLength: 1,
  maxLength: 256,
  description: "Shown in the portal and the dashboard.",
};

export const appSchemas: Record<string, Schema> = {
  App: {
    type: "object",
    required: ["id", "object", "uid", "name", "created_at", "updated_at"],
    properties: {
      id: { type: "string", examples: ["app_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "app" },
      uid: { type: ["string", "null"] },
      name: { type: "string" },
      created_at: timestamp,
      updated_at: timestamp,
    },
  },
};

function checkUid(value: unknown): void {
  if (typeof value === "string" && value.startsWith("app_")) {
    throw invalid("uid", "uid must not start with 'app_': that prefix is reserved for app ids.");
  }
}

async function uniqueUid<T>(run: () => Promise<T>, value: string | undefined): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: string }).code === "P2002")
      throw conflict("resource_exists", `An app with uid '${value}' already exists.`, "uid");
    throw err;
  }
}

type CreateBody = { uid?: string; name: string };

export const appRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/apps",
    auth: "account",
    scope: "apps:write",
    audit: "app.created",
    tag: "Apps",
    summary: "Create an app",
    description:
      "An app is the record of one of your customers. Pass `uid` to name it by your own id from then on.",
    body: { type: "object", additionalProperties: false, required: ["name"], properties: { uid, name } },
    response: { status: 201, schema: ref("App"), description: "The app." },
    async handler({ account, body, deps, audit }: Ctx<object, object, CreateBody>) {
      checkUid(body.uid);
      const app = await uniqueUid(
        () =>
          deps.prisma.$transaction(async (tx) => {
            const made = await tx.app.create({
              data: { id: newId("app"), accountId: account.id, uid: body.uid ?? null, name: body.name },
            });
            await audit(tx, { type: "app", id: made.id });
            return made;
          }),
        body.uid,
      );
      return { status: 201, body: serializeApp(app) };
    },
  },
  {
    method: "get",
    path: "/v3/apps",
    auth: "account",
    scope: "apps:read",
    oneApp: true,
    tag: "Apps",
    summary: "List apps",
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("App"), description: "A page of apps, newest first." },
    async handler({ account, query, deps }: Ctx<object, PageQuery>) {
      const cursor = await cursorOf(query, (id) => (isId("app", id) ? id : null));
      const rows = await deps.prisma.app.findMany({
        where: {
          accountId: account.id,
          deletedAt: null,
          operational: false,
          ...(cursor.id ? { id: cursor.id } : {}),
          // A key confined to one app lists that one.
          ...(account.appId ? { AND: [{ id: account.appId }] } : {}),
        },
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serializeApp) } };
    },
  },
  {
    method: "get",
    path: "/v3/apps/{app}",
    auth: "account",
    scope: "apps:read",
    portal: "read",
    tag: "Apps",
    summary: "Retrieve an app",
    params: { app: "The app's id or uid." },
    response: { status: 200, schema: ref("App"), description: "The app." },
    async handler({ account, params, deps }: Ctx<{ app: string }>) {
      const { id } = await resolveApp(deps.prisma, account.id, params.app, "app", { operational: "allow" });
      checkAppReach(account, id, "app", params.app, "app");
      return { body: serializeApp(await deps.prisma.app.findUniqueOrThrow({ where: { id } })) };
    },
  },
  {
    method: "post",
    path: "/v3/apps/{app}",
    auth: "account",
    scope: "apps:write",
    audit: "app.updated",
    oneApp: true,
    tag: "Apps",
    summary: "Update an app",
    params: { app: "The app's id or uid." },
    body: {
      type: "object",
      additionalProperties: false,
      properties: { uid: { ...uid, type: ["string", "null"] }, name },
    },
    response: { status: 200, schema: ref("App"), description: "The updated app." },
    async handler({
      account,
      params,
      body,
      deps,
      audit,
    }: Ctx<{ app: string }, object, Partial<{ uid: string | null; name: string }>>) {
      checkUid(body.uid);
      const { id } = await resolveApp(deps.prisma, account.id, params.app, "app");
      checkAppReach(account, id, "app", params.app, "app");
      // uids are the account's to give: a confined key could take one its backend sends by.
      if (account.appId && body.uid !== undefined)
        throw new ApiError(
          403,
          "invalid_request_error",
          "app_confined",
          "A key confined to one app cannot change its uid: uids name apps across the account.",
          "uid",
        );
      const app = await uniqueUid(async () => {
        try {
          // Not an app deleted since it was resolved: its uid must stay free.
          return await deps.prisma.$transaction(async (tx) => {
            const { count } = await tx.app.updateMany({
              where: { id, deletedAt: null },
              data: { ...body, updatedAt: new Date() },
            });
            if (!count) throw notFound("app", params.app, "app");
            await audit(tx, { type: "app", id });
            return await tx.app.findUniqueOrThrow({ where: { id } });
          });
        } finally {
          deps.caches.apps.clear();
        }
      }, body.uid ?? undefined);
      return { body: serializeApp(app) };
    },
  },
  {
    method: "delete",
    path: "/v3/apps/{app}",
    auth: "account",
    scope: "apps:write",
    audit: "app.deleted",
    oneApp: true,
    tag: "Apps",
    summary: "Delete an app",
    description:
      "Deletes the app with its endpoints, events, deliveries and attempts. It is gone from every read at once, its `uid` free again, and nothing more is sent to its endpoints; what it held is removed in the background.",
    params: { app: "The app's id or uid." },
    response: { status: 200, schema: deletedSchema("app"), description: "The app was deleted." },
    async handler({ account, params, deps, audit }: Ctx<{ app: string }>) {
      const { id } = await resolveApp(deps.prisma, account.id, params.app, "app");
      checkAppReach(account, id, "app", params.app, "app");
      const deletedAt = new Date();
      // Marked here, in one short transaction; the dispatcher deletes the rows in bounded
      // batches (app.deleted.v1), so a large app neither holds this request nor locks out
      // the results being recorded meanwhile.
      const row = await deps.prisma.$transaction(async (tx) => {
        const marked = await tx.app.updateMany({
          where: { id, deletedAt: null },
          data: { deletedAt, uid: null, updatedAt: deletedAt },
        });
        if (!marked.count) throw notFound("app", params.app, "app");
        await audit(tx, { type: "app", id });
        await tx.endpoint.updateMany({ where: { appId: id, deletedAt: null }, data: { deletedAt } });
        await tx.session.updateMany({
          where: { appId: id, revokedAt: null },
          data: { revokedAt: deletedAt },
        });
        // So do the keys confined to it, and the dashboard sessions they opened.
        const keys = await tx.apiKey.findMany({
          where: { appId: id, revokedAt: null },
          select: { id: true },
        });
        if (keys.length) {
          const keyIds = keys.map((k) => k.id);
          await tx.apiKey.updateMany({ where: { id: { in: keyIds } }, data: { revokedAt: deletedAt } });
          await tx.session.updateMany({
            where: { keyId: { in: keyIds }, revokedAt: null },
            data: { revokedAt: deletedAt },
          });
        }
        return deps.outbox.stage(tx, "app.deleted.v1", {
          app_id: id,
          account_id: account.id,
          deleted_at: deletedAt.toISOString(),
        });
      });
      deps.outbox.publishAfterCommit([row]);
      deps.caches.apps.clear();
      deps.caches.keys.clear();
      return { body: deleted(id, "app") };
    },
  },
];
