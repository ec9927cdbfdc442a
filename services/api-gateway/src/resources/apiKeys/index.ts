import { beyond, SCOPES, type Scope } from "@herald/contracts/scopes";
import { isId, newId, type Prisma } from "@herald/db";
import type { Account, Ctx } from "../../context.ts";
import { insufficientScope } from "../../http/access.ts";
import { generateApiKey } from "../../http/auth.ts";
import { ApiError, invalid, notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import {
  appRef,
  checkAppReach,
  deleted,
  deletedSchema,
  iso,
  nullableTimestamp,
  parseTime,
  resolveApp,
  timeInput,
  timestamp,
} from "../common.ts";

type KeyRow = {
  id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  appId: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  revokedAt: Date | null;
};

export const serializeApiKey = (k: KeyRow, secret?: string) => ({
  id: k.id,
  object: "api_key" as const,
  name: k.name,
  prefix: k.prefix,
  ...(secret !== undefined ? { key: secret } : {}),
  scopes: k.scopes,
  app: k.appId,
  expires_at: iso(k.expiresAt),
  created_at: iso(k.createdAt),
  revoked_at: iso(k.revokedAt),
});

const scopesSchema: Schema = {
  type: "array",
  items: { type: "string", enum: [...SCOPES] },
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description:
    "What the key may do: `events:write`, `events:read`, `endpoints:write`, `endpoints:read`, `apps:write`, `apps:read`, `event_types:write`, `event_types:read`, `portal` (portal sessions), `keys` (API keys and dashboard sessions), or `*` for all. A `:write` scope covers its `:read`. Each operation's scope is its `x-herald-scope` in this document.",
};

export const apiKeySchemas: Record<string, Schema> = {
  ApiKey: {
    type: "object",
    required: ["id", "object", "name", "prefix", "scopes", "app", "expires_at", "created_at", "revoked_at"],
    properties: {
      id: { type: "string", examples: ["key_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "api_key" },
      name: { type: ["string", "null"] },
      prefix: { type: "string", description: "The key's first characters, to tell keys apart." },
      key: { type: "string", description: "The secret key. Present only in the response that created it." },
      scopes: scopesSchema,
      app: {
        type: ["string", "null"],
        description: "The one app whose objects the key reaches; null: the whole account.",
      },
      expires_at: { ...nullableTimestamp, description: "When the key stops working; null: never." },
      created_at: timestamp,
      revoked_at: nullableTimestamp,
    },
  },
};

/** What a new key is given besides its name: by default, all its maker holds. */
export type KeyGrant = { scopes?: readonly string[]; appId?: string | null; expiresAt?: Date | null };

/** Creates a key for an account inside a transaction; the secret is returned once. */
export async function createApiKey(
  tx: Pick<Prisma.TransactionClient, "apiKey">,
  accountId: string,
  name: string | null,
  given?: ReturnType<typeof generateApiKey>,
  grant: KeyGrant = {},
) {
  const { key, hash, prefix } = given ?? generateApiKey();
  const row = await tx.apiKey.create({
    data: {
      id: newId("apiKey"),
      accountId,
      name,
      hash,
      prefix,
      scopes: [...(grant.scopes ?? ["*"])],
      appId: grant.appId ?? null,
      expiresAt: grant.expiresAt ?? null,
    },
  });
  return serializeApiKey(row, key);
}

type CreateBody = { name?: string; scopes?: Scope[]; app?: string; expires_at?: string | number };

/**
 * What the caller may give a new key: no scope it lacks, no app but its own when confined to
 * one, and no later end than its own. What the body leaves out, the new key takes from it.
 */
async function grantOf(account: Account, body: CreateBody, deps: Ctx["deps"]): Promise<KeyGrant> {
  const held = account.scopes ?? [];
  const scopes = body.scopes ?? [...held];
  const lacking = beyond(held, scopes as Scope[]);
  if (lacking.length) throw insufficientScope(account, lacking[0]!, "to give it to a key");
  let appId = account.appId ?? null;
  if (body.app !== undefined) {
    const app = await resolveApp(deps.prisma, account.id, body.app, "app");
    checkAppReach(account, app.id, "app", body.app, "app");
    appId = app.id;
  }
  let expiresAt = account.expiresAt ?? null;
  if (body.expires_at !== undefined) {
    const at = parseTime(body.expires_at);
    if (Number.isNaN(at.getTime())) throw invalid("expires_at", "expires_at is not a valid time.");
    if (at <= new Date()) throw invalid("expires_at", "expires_at must be in the future.");
    if (account.expiresAt && at > account.expiresAt)
      throw new ApiError(
        403,
        "invalid_request_error",
        "key_outlives_maker",
        `A key may not outlive the key that makes it: this one expires at ${account.expiresAt.toISOString()}.`,
        "expires_at",
      );
    expiresAt = at;
  }
  return { scopes, appId, expiresAt };
}

export const apiKeyRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/api-keys",
    auth: "account",
    scope: "keys",
    audit: "api_key.created",
    oneApp: true,
    apiKeyOnly: true,
    tag: "API keys",
    summary: "Create an API key",
    description:
      "The response carries the secret `key`. It is shown this once: only a hash is kept. A key holds `scopes` (by default those of the key that makes it), may be confined to one `app`, and may expire (`expires_at`). No key can make a key with more than it holds: a scope it lacks is a `403` (`insufficient_scope`), another app than its own a `404`, a later expiry than its own a `403`. Only an API key may make one: a browser session gets a `403`.",
    body: {
      type: "object",
      additionalProperties: false,
      properties: {
        name: { type: "string", maxLength: 256 },
        scopes: scopesSchema,
        app: {
          ...appRef,
          description: "Confine the key to this app (its id or uid): it reaches nothing else.",
        },
        expires_at: { ...timeInput, description: "When the key stops working (ISO 8601 or unix seconds)." },
      },
    },
    response: { status: 201, schema: ref("ApiKey"), description: "The key, with its secret." },
    async handler({ account, body, deps, audit }: Ctx<object, object, CreateBody>) {
      const grant = await grantOf(account, body, deps);
      const made = await deps.prisma.$transaction(async (tx) => {
        const key = await createApiKey(tx, account.id, body.name ?? null, undefined, grant);
        await audit(tx, { type: "api_key", id: key.id });
        return key;
      });
      return { status: 201, body: made };
    },
  },
  {
    method: "get",
    path: "/v3/api-keys",
    auth: "account",
    scope: "keys",
    oneApp: true,
    tag: "API keys",
    summary: "List API keys",
    description:
      "Revoked keys are listed with `revoked_at`. Secrets are never shown again. A key confined to an app lists the keys confined to it.",
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("ApiKey"), description: "A page of keys, newest first." },
    async handler({ account, query, deps }: Ctx<object, PageQuery>) {
      const cursor = await cursorOf(query, (id) => (isId("apiKey", id) ? id : null));
      const rows = await deps.prisma.apiKey.findMany({
        where: {
          accountId: account.id,
          ...(cursor.id ? { id: cursor.id } : {}),
          ...(account.appId ? { appId: account.appId } : {}),
        },
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
    scope: "keys",
    audit: "api_key.revoked",
    oneApp: true,
    apiKeyOnly: true,
    tag: "API keys",
    summary: "Revoke an API key",
    description:
      "From now on the key is a 401, and every portal and dashboard session it made (or a dashboard session it made made) ends. A key may revoke itself, and any key holding no scope it lacks; a key confined to an app, only the keys confined to it. Only an API key may revoke one: a browser session gets a `403`.",
    params: { id: "The key's id." },
    response: { status: 200, schema: deletedSchema("api_key"), description: "The key was revoked." },
    async handler({ account, params, deps, audit }: Ctx<{ id: string }>) {
      if (!isId("apiKey", params.id)) throw notFound("API key", params.id);
      await deps.prisma.$transaction(async (tx) => {
        const revokedAt = new Date();
        // A key revokes itself, or a key holding no more than it does: `keys` alone does not
        // end an administrator's key.
        const target = await tx.apiKey.findFirst({
          where: { id: params.id, accountId: account.id, ...(account.appId ? { appId: account.appId } : {}) },
          select: { scopes: true },
        });
        const above =
          target && params.id !== account.keyId ? beyond(account.scopes ?? [], target.scopes as Scope[]) : [];
        if (above.length) throw insufficientScope(account, above[0]!, "to revoke a key that holds it");
        const changed = await tx.apiKey.updateMany({
          where: {
            id: params.id,
            accountId: account.id,
            revokedAt: null,
            ...(account.appId ? { appId: account.appId } : {}),
          },
          data: { revokedAt },
        });
        if (!changed.count) throw notFound("API key", params.id);
        // Every browser session the key led to ends with it: a leaked key's dashboard and portal
        // links must not outlive its revocation.
        await tx.session.updateMany({
          where: { accountId: account.id, keyId: params.id, revokedAt: null },
          data: { revokedAt },
        });
        await audit(tx, { type: "api_key", id: params.id });
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
