import { isId, newId, type Prisma } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { generateApiKey } from "../../http/auth.ts";
import { notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { deleted, deletedSchema, iso, nullableTimestamp, timestamp } from "../common.ts";

type KeyRow = { id: string; name: string | null; prefix: string; createdAt: Date; revokedAt: Date | null };

export const serializeApiKey = (k: KeyRow, secret?: string) => ({
  id: k.id,
  object: "api_key" as const,
  name: k.name,
  prefix: k.prefix,
  ...(secret !== undefined ? { key: secret } : {}),
  created_at: iso(k.createdAt),
  revoked_at: iso(k.revokedAt),
});

export const apiKeySchemas: Record<string, Schema> = {
  ApiKey: {
    type: "object",
    required: ["id", "object", "name", "prefix", "created_at", "revoked_at"],
    properties: {
      id: { type: "string", examples: ["key_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "api_key" },
      name: { type: ["string", "null"] },
      prefix: { type: "string", description: "The key's first characters, to tell keys apart." },
      key: { type: "string", description: "The secret key. Present only in the response that created it." },
      created_at: timestamp,
      revoked_at: nullableTimestamp,
    },
  },
};

/** Creates a key for an account inside a transaction; the secret is returned once. */
export async function createApiKey(
  tx: Pick<Prisma.TransactionClient, "apiKey">,
  accountId: string,
  name: string | null,
  given?: ReturnType<typeof generateApiKey>,
) {
  const { key, hash, prefix } = given ?? generateApiKey();
  const row = await tx.apiKey.create({ data: { id: newId("apiKey"), accountId, name, hash, prefix } });
  return serializeApiKey(row, key);
}

export const apiKeyRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/api-keys",
    auth: "account",
    apiKeyOnly: true,
    tag: "API keys",
    summary: "Create an API key",
    description:
      "The response carries the secret `key`. It is shown this once: only a hash is kept. Only an API key may make one: a browser session gets a `403`.",
    body: {
      type: "object",
      additionalProperties: false,
      properties: { name: { type: "string", maxLength: 256 } },
    },
    response: { status: 201, schema: ref("ApiKey"), description: "The key, with its secret." },
    async handler({ account, body, deps }: Ctx<object, object, { name?: string }>) {
      return { status: 201, body: await createApiKey(deps.prisma, account.id, body.name ?? null) };
    },
  },
  {
    method: "get",
    path: "/v3/api-keys",
    auth: "account",
    tag: "API keys",
    summary: "List API keys",
    description: "Revoked keys are listed with `revoked_at`. Secrets are never shown again.",
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("ApiKey"), description: "A page of keys, newest first." },
    async handler({ account, query, deps }: Ctx<object, PageQuery>) {
      const cursor = await cursorOf(query, (id) => (isId("apiKey", id) ? id : null));
      const rows = await deps.prisma.apiKey.findMany({
        where: { accountId: account.id, ...(cursor.id ? { id: cursor.id } : {}) },
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map((k) => serializeApiKey(k)) } };
    },
  },
  {
    method: "delete",
    path: "/v3/api-keys/{id}",
    auth: "account",
    apiKeyOnly: true,
    tag: "API keys",
    summary: "Revoke an API key",
    description:
      "From now on the key is a 401, and every portal and dashboard session it made (or a dashboard session it made made) ends. A key may revoke itself. Only an API key may revoke one: a browser session gets a `403`.",
    params: { id: "The key's id." },
    response: { status: 200, schema: deletedSchema("api_key"), description: "The key was revoked." },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const changed = isId("apiKey", params.id)
        ? await deps.prisma.apiKey.updateMany({
            where: { id: params.id, accountId: account.id, revokedAt: null },
            data: { revokedAt: new Date() },
          })
        : { count: 0 };
      if (!changed.count) throw notFound("API key", params.id);
      // Every browser session the key led to ends with it: a leaked key's dashboard and portal
      // links must not outlive its revocation.
      await deps.prisma.session.updateMany({
        where: { accountId: account.id, keyId: params.id, revokedAt: null },
        data: { revokedAt: new Date() },
      });
      deps.caches.keys.clear();
      return { body: deleted(params.id, "api_key") };
    },
  },
];

export const accountSchema: Schema = {
  type: "object",
  required: ["id", "object", "name", "retention_seconds", "created_at"],
  properties: {
    id: { type: "string" },
    object: { const: "account" },
    name: { type: "string" },
    retention_seconds: {
      type: ["integer", "null"],
      description:
        "How long the account's events, with their deliveries and attempts, are kept, in seconds. Null: the dispatcher's `RETENTION` (30 days by default). Set by the operator.",
    },
    created_at: timestamp,
  },
};
