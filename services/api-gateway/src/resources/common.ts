import { isId, type Prisma, type PrismaClient } from "@herald/db";
import type { Account, Deps } from "../context.ts";
import { invalid, notFound } from "../http/errors.ts";
import type { Schema } from "../http/route.ts";

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export const timestamp: Schema = {
  type: "string",
  format: "date-time",
  examples: ["2026-11-21T10:00:00.000Z"],
};
export const nullableTimestamp: Schema = { type: ["string", "null"], format: "date-time" };

/** A time input: ISO 8601, or unix seconds. */
export const timeInput: Schema = {
  anyOf: [
    { type: "string", format: "date-time" },
    { type: "integer", minimum: 0 },
  ],
  description: "ISO 8601 time, or unix seconds.",
};

/**
 * An ISO 8601 time or unix seconds; an invalid Date (NaN) for anything else, and for a year
 * PostgreSQL does not take (before 1 or after 9999), which JavaScript would.
 */
export function parseTime(value: string | number): Date {
  const time =
    typeof value === "number" || /^\d+$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
  const year = time.getUTCFullYear();
  return year >= 1 && year <= 9999 ? time : new Date(Number.NaN);
}

export const deleted = (id: string, object: string) => ({ id, object, deleted: true });

export const deletedSchema = (object: string): Schema => ({
  type: "object",
  required: ["id", "object", "deleted"],
  properties: { id: { type: "string" }, object: { const: object }, deleted: { const: true } },
});

/**
 * An app named by its id or by the caller's uid, within one account; another account's, and a
 * deleted one, is a 404. The account's operational app (operational/crud.ts) is only for reads that
 * say `operational: "allow"`: nothing is sent to it, nor changed in it, through the app.
 */
export async function resolveApp(
  prisma: Pick<PrismaClient, "app">,
  accountId: string,
  ref: string,
  param: string,
  options: { operational?: "allow" } = {},
): Promise<{ id: string; uid: string | null; operational: boolean }> {
  const where = isId("app", ref)
    ? { id: ref, accountId, deletedAt: null }
    : { accountId, uid: ref, deletedAt: null };
  const app = await prisma.app.findFirst({ where, select: { id: true, uid: true, operational: true } });
  if (!app) throw notFound("app", ref, param);
  if (app.operational && options.operational !== "allow")
    throw invalid(
      param,
      `'${ref}' is the account's operational webhooks app, which Herald runs: it takes no events and no changes. Its endpoints are managed at /v3/operational-endpoints and /v3/endpoints/{id}.`,
      "operational_app",
    );
  return app;
}

/** resolveApp through the app cache: for the paths every event takes. */
export async function resolveAppCached(
  deps: Pick<Deps, "prisma" | "caches">,
  accountId: string,
  ref: string,
  param: string,
) {
  const key = `${accountId}:${ref}`;
  const cached = deps.caches.apps.get(key);
  if (cached) return cached;
  const app = await resolveApp(deps.prisma, accountId, ref, param);
  deps.caches.apps.set(key, app);
  return app;
}

export const appRef: Schema = {
  type: "string",
  minLength: 1,
  maxLength: 256,
  description: "The app's id or its uid.",
};

/**
 * A portal session, and a key confined to an app, sees one app: anything of another app is a
 * 404, as another account's is.
 * Throws that 404 when `appId` is out of the caller's reach.
 */
export function checkAppReach(account: Account, appId: string, kind: string, id: string, param = "id"): void {
  if (account.appId && account.appId !== appId) throw notFound(kind, id, param);
}

/**
 * Apps a list across the account leaves out: those deleted but not yet purged (the dispatcher
 * removes what they held in the background, and no read shows any of it meanwhile), and the
 * operational app, listed only when named. Usually none, or that one.
 */
async function hiddenApps(
  prisma: Pick<PrismaClient, "app">,
  accountId: string,
  operational: boolean,
): Promise<string[]> {
  const rows = await prisma.app.findMany({
    where: { accountId, OR: [{ deletedAt: { not: null } }, ...(operational ? [{ operational: true }] : [])] },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/**
 * Runs `write` in a transaction that holds the app's row (`FOR SHARE`) while it writes what
 * belongs to the app. An app deleted at the same moment is either deleted first (then this is a
 * 404) or waits for this write, and then deletes what it wrote with the rest: nothing is left
 * behind under a deleted app.
 */
export function withLiveApp<T>(
  prisma: PrismaClient,
  app: { id: string; ref: string; param: string },
  write: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  return prisma.$transaction(async (tx) => {
    const live = await tx.$queryRaw<
      unknown[]
    >`SELECT 1 FROM apps WHERE id = ${app.id} AND deleted_at IS NULL FOR SHARE`;
    if (!live.length) throw notFound("app", app.ref, app.param);
    return write(tx);
  });
}

/** 404 for an object whose app was deleted (its rows are still being removed). */
export async function checkAppLive(
  prisma: Pick<PrismaClient, "app">,
  appId: string,
  kind: string,
  id: string,
  param = "id",
): Promise<void> {
  if (!(await prisma.app.count({ where: { id: appId, deletedAt: null } }))) throw notFound(kind, id, param);
}

/** Which apps a list across the account covers: one, or all but those hidden. */
export type AppFilter = { appId?: string; hidden: string[] };

/**
 * The app a list is filtered by: the one the `app` query names (id or uid, the operational app
 * too), and for a portal session always its own; asking for another app is a 404. Without one,
 * the list leaves out the apps deleted and not yet purged, and the operational app unless the
 * list is `narrowed` to an endpoint or an event, which may be of it.
 */
export async function listAppFilter(
  deps: Pick<Deps, "prisma">,
  account: Account,
  ref: string | undefined,
  narrowed = false,
): Promise<AppFilter> {
  const requested =
    ref !== undefined
      ? (await resolveApp(deps.prisma, account.id, ref, "app", { operational: "allow" })).id
      : undefined;
  if (account.appId && requested !== undefined && requested !== account.appId)
    throw notFound("app", ref!, "app");
  const appId = account.appId ?? requested;
  return appId ? { appId, hidden: [] } : { hidden: await hiddenApps(deps.prisma, account.id, !narrowed) };
}

/** An AppFilter as a Prisma condition on `appId`. */
export function appIdWhere(filter: AppFilter): { appId?: string | { notIn: string[] } } {
  if (filter.appId) return { appId: filter.appId };
  return filter.hidden.length ? { appId: { notIn: filter.hidden } } : {};
}
