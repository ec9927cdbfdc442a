import { isId, newId } from "@herald/db";
import type { Ctx } from "../context.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../http/route.ts";
import { accountSchema, createApiKey } from "./apiKeys.ts";
import { iso } from "./common.ts";

/** Operator routes, guarded by ADMIN_TOKEN: accounts are made here, each with a first key. */
type AccountRow = { id: string; name: string; createdAt: Date };

const serializeAccount = (a: AccountRow) => ({
  id: a.id,
  object: "account" as const,
  name: a.name,
  created_at: iso(a.createdAt),
});

export const adminSchemas: Record<string, Schema> = {
  Account: accountSchema,
  AccountWithKey: {
    type: "object",
    required: ["account", "api_key"],
    properties: { account: ref("Account"), api_key: ref("ApiKey") },
  },
};

export const adminRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/admin/accounts",
    auth: "admin",
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
    async handler({ body, deps }: Ctx<object, object, { name: string }>) {
      const result = await deps.prisma.$transaction(async (tx) => {
        const account = await tx.account.create({ data: { id: newId("account"), name: body.name } });
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
];
