import type { ApiKey } from "@herald/sdk";
import { type Command, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { type Column, dim, fields, json, note, out, table, time } from "../output.ts";

/** `keys list|create|revoke`: the account's API keys, with what each may do. */

const SCOPES = [
  "events:write",
  "events:read",
  "endpoints:write",
  "endpoints:read",
  "apps:write",
  "apps:read",
  "event_types:write",
  "event_types:read",
  "portal",
  "keys",
  "audit_log:read",
  "*",
] as const;

const keyColumns: Column<ApiKey>[] = [
  { header: "ID", value: (k) => k.id },
  { header: "NAME", value: (k) => k.name, max: 30 },
  { header: "PREFIX", value: (k) => k.prefix },
  { header: "SCOPES", value: (k) => k.scopes.join(","), max: 60 },
  { header: "APP", value: (k) => k.app },
  { header: "EXPIRES", value: (k) => (k.expires_at ? time(k.expires_at) : "") },
  { header: "REVOKED", value: (k) => (k.revoked_at ? time(k.revoked_at) : "") },
];

/** --scope, once or more, each one or a comma-separated few. */
function scopesOf(raw: unknown): (typeof SCOPES)[number][] | undefined {
  const given = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).flatMap((v) =>
    String(v).split(","),
  );
  if (!given.length) return undefined;
  for (const scope of given)
    if (!(SCOPES as readonly string[]).includes(scope))
      throw new UsageError(`--scope must be one of ${SCOPES.join(", ")}, got "${scope}".`);
  return [...new Set(given)] as (typeof SCOPES)[number][];
}

export const keyCommands: Command[] = [
  {
    name: "keys list",
    usage: "keys list [--all]",
    summary: "Lists the account's API keys with their scopes, app and expiry (needs the `keys` scope).",
    options: { all: { type: "boolean" } },
    async run(ctx) {
      const keys = await ctx
        .herald()
        .apiKeys.list({ limit: 100 })
        .toArray({ max: ctx.values.all ? Number.POSITIVE_INFINITY : 100 });
      if (ctx.json) out(json(keys));
      else if (!keys.length) note(dim("No keys."));
      else out(table(keys, keyColumns));
      return 0;
    },
  },
  {
    name: "keys create",
    usage: "keys create [--name NAME] [--scope SCOPE]... [--app APP] [--expires-at TIME]",
    summary: "Makes an API key and prints its secret, shown this once.",
    help: `  --name NAME         what the key is for
  --scope SCOPE       what it may do, once or more (or comma-separated): ${SCOPES.join(", ")}.
                      A :write scope covers its :read. Default: the scopes of the key you use.
  --app APP           confine it to one app (id or uid)
  --expires-at TIME   when it stops working: ISO 8601 or unix seconds

No key can make a key with more than it holds: a scope it lacks, another app, or a later expiry
is refused. Example, a backend that only sends events:
  herald keys create --name checkout --scope events:write`,
    options: {
      name: { type: "string" },
      scope: { type: "string", multiple: true },
      app: { type: "string" },
      "expires-at": { type: "string" },
    },
    async run(ctx) {
      const expires = str(ctx.values, "expires-at");
      const key = await ctx.herald().apiKeys.create({
        ...(str(ctx.values, "name") !== undefined ? { name: str(ctx.values, "name") } : {}),
        ...(scopesOf(ctx.values.scope) ? { scopes: scopesOf(ctx.values.scope) } : {}),
        ...(str(ctx.values, "app") !== undefined ? { app: str(ctx.values, "app") } : {}),
        ...(expires !== undefined ? { expires_at: /^\d+$/.test(expires) ? Number(expires) : expires } : {}),
      });
      if (ctx.json) out(json(key));
      else {
        out(fields(key as unknown as Record<string, unknown>));
        note(dim("The key is shown this once: store it now."));
      }
      return 0;
    },
  },
  {
    name: "keys revoke",
    usage: "keys revoke <key id>",
    summary: "Revokes an API key: it is a 401 from now on, and the sessions it opened end.",
    positionals: [1, 1],
    async run(ctx) {
      const done = await ctx.herald().apiKeys.revoke(ctx.positionals[0]!);
      out(ctx.json ? json(done) : `Revoked ${ctx.positionals[0]}.`);
      return 0;
    },
  },
];
