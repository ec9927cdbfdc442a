import { isId, newId } from "@herald/db";
import { RETENTION_MAX_SECONDS } from "@herald/db/lifecycle";
import type { Actor } from "../../audit/record.ts";
import type { Ctx } from "../../context.ts";
import { notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { accountSchema, createApiKey } from "../apiKeys/index.ts";
import { iso } from "../common.ts";

/** Operator routes, guarded by ADMIN_TOKEN: accounts are made here, each with a first key. */
type AccountRow = { id: string; name: string; retentionSeconds: number | null; createdAt: Date };

const serializeAccount = (a: AccountRow) => ({
  id: a.id,
  object: "account" as const,
  name: a.name,
  retention_seconds: a.retentionSeconds,
  created_at: iso(a.createdAt),
});

const byId = { id: "The account's id." };

async function findAccount(deps: Ctx["deps"], id: string): Promise<AccountRow> {
  const found = isId("account", id) ? await deps.prisma.account.findUnique({ where: { id } }) : null;
  if (!found) throw notFound("account", id);
  return found;
}

export const adminSchemas: Record<string, Schema> = {
  Account: accountSchema,
  AccountWithKey: {
    type: "object",
    required: ["account", "api_key"],
    properties: { account: ref("Account"), api_key: ref("ApiKey") },
  },
};

/** The operator, in the audit log: whoever holds ADMIN_TOKEN. */
const OPERATOR: Actor = { type: "operator", id: "admin_token" };

export const adminRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/admin/accounts",
    auth: "admin",
    audit: "account.created",
    tag: "Operator",
    summary: "Create an account",
    description:
      "Needs `Authorization: Bearer <ADMIN_TOKEN>`. Returns the account and its first API key (shown once).",
    body: {
      type: "object",
      additionalProperties: false,
      required: ["name"],
      properties: { name: { type: "string", minLength: 1, maxLength: 256 } },
    },
    response: { status: 201, schema: ref("AccountWithKey"), description: "The account and its key." },
    async handler({ body, deps, audit }: Ctx<object, object, { name: string }>) {
      const result = await deps.prisma.$transaction(async (tx) => {
        const account = await tx.account.create({ data: { id: newId("account"), name: body.name } });
        await audit(tx, { type: "account", id: account.id }, { accountId: account.id, actor: OPERATOR });
        return { account: serializeAccount(account), api_key: await createApiKey(tx, account.id, "default") };
      });
      return { status: 201, body: result };
    },
  },
  {
    method: "get",
    path: "/admin/accounts",
    auth: "admin",
    tag: "Operator",
    summary: "List accounts",
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("Account"), description: "A page of accounts, newest first." },
    async handler({ query, deps }: Ctx<object, PageQuery>) {
      const cursor = await cursorOf(query, (id) => (isId("account", id) ? id : null));
      const rows = await deps.prisma.account.findMany({
        where: cursor.id ? { id: cursor.id } : {},
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serializeAccount) } };
    },
  },
  {
    method: "get",
    path: "/admin/accounts/{id}",
    auth: "admin",
    tag: "Operator",
    summary: "Retrieve an account",
    params: byId,
    response: { status: 200, schema: ref("Account"), description: "The account." },
    async handler({ params, deps }: Ctx<{ id: string }>) {
      return { body: serializeAccount(await findAccount(deps, params.id)) };
    },
  },
  {
    method: "post",
    path: "/admin/accounts/{id}",
    auth: "admin",
    audit: "account.updated",
    tag: "Operator",
    summary: "Update an account",
    description:
      "Its name, or its retention: how long its events, with their deliveries and attempts, are kept (`null`: the dispatcher's `RETENTION`). A shorter retention applies at the dispatcher's next maintenance pass (`MAINTENANCE_INTERVAL`); an event whose delivery is still `pending` or `retrying` is kept until that delivery ends.",
    params: byId,
    body: {
      type: "object",
      additionalProperties: false,
      properties: {
        name: { type: "string", minLength: 1, maxLength: 256 },
        retention_seconds: { type: ["integer", "null"], minimum: 1, maximum: RETENTION_MAX_SECONDS },
      },
    },
    response: { status: 200, schema: ref("Account"), description: "The account, updated." },
    async handler({
      params,
      body,
      deps,
      audit,
    }: Ctx<{ id: string }, object, { name?: string; retention_seconds?: number | null }>) {
      const found = await findAccount(deps, params.id);
      const updated = await deps.prisma.$transaction(async (tx) => {
        await audit(tx, { type: "account", id: found.id }, { accountId: found.id, actor: OPERATOR });
        return tx.account.update({
          where: { id: found.id },
          data: {
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.retention_seconds !== undefined ? { retentionSeconds: body.retention_seconds } : {}),
          },
        });
      });
      return { body: serializeAccount(updated) };
    },
  },
];
