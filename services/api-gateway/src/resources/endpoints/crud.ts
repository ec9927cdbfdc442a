import { endpointSecretContext, isId, newId, type Prisma, type PrismaClient } from "@herald/db";
import type { Notice } from "@herald/db/lifecycle";
import type { Account, Ctx, Deps } from "../../context.ts";
import type { Answerable } from "../../http/deadline.ts";
import { invalid, notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref } from "../../http/route.ts";
import {
  appIdWhere,
  appRef,
  checkAppReach,
  deleted,
  deletedSchema,
  listAppFilter,
  resolveApp,
  withLiveApp,
} from "../common.ts";
import {
  checkOperationalTypes,
  disabledByHand,
  recoveredByHand,
  stageInPrisma,
} from "../operational/notices.ts";
import {
  type AuthInput,
  authColumns,
  authFields,
  checkAuthFits,
  checkCredentialsFollow,
  checkTokenFollows,
  openAuth,
} from "./auth.ts";
import { checkHeadersFollow, keepRedacted, openHeaders, sealHeaders } from "./headers.ts";
import {
  checkEndpointRoom,
  checkEndpointUrl,
  checkEventTypes,
  checkFilter,
  checkHeaders,
  checkNotListening,
  checkSecret,
  endpointFields,
  generateSecret,
} from "./input.ts";
import { serializeEndpoint } from "./object.ts";
import { heldBehind } from "./order.ts";
import { checkTransformation } from "./transformation.ts";

/** A page of the account's live endpoints matching `where`, newest first. */
export async function endpointPage(
  deps: Deps,
  accountId: string,
  where: Prisma.EndpointWhereInput,
  query: PageQuery,
) {
  const cursor = await cursorOf(query, (id) => (isId("endpoint", id) ? id : null));
  const rows = await deps.prisma.endpoint.findMany({
    where: { accountId, deletedAt: null, ...where, ...(cursor.id ? { id: cursor.id } : {}) },
    orderBy: { id: cursor.order },
    take: cursor.take,
    include: { flow: true },
  });
  const list = toList(rows, cursor, query.limit);
  return { ...list, data: list.data.map((e) => serializeEndpoint(e)) };
}

/** A live (not deleted) endpoint of the account; anything else is a 404. */
export async function findEndpoint(
  prisma: Pick<PrismaClient, "endpoint">,
  account: Account,
  id: string,
  param = "id",
) {
  const found = isId("endpoint", id)
    ? await prisma.endpoint.findFirst({
        where: { id, accountId: account.id, deletedAt: null },
        include: { flow: true, app: { select: { operational: true } } },
      })
    : null;
  if (!found) throw notFound("endpoint", id, param);
  checkAppReach(account, found.appId, "endpoint", id, param);
  return found;
}

const byId = { id: "The endpoint's id." };

/** A flow with no pause, slow-down or run of failures; the gate looks at its queue at once. */
const FRESH_FLOW = {
  failures: 0,
  opens: 0,
  pauseReason: null,
  pausedUntil: null,
  probeAttemptId: null,
  limitNow: null,
  slowUntil: null,
  nextReleaseAt: new Date(0),
};

/**
 * Makes the endpoint's flow fresh; true when that ended an open breaker (a pause told as
 * `endpoint.paused`). A conditional update first, so of requests resetting it at once only
 * the one that found it paused says so (a Retry-After pause, never told, ends untold).
 */
async function freshFlow(tx: Prisma.TransactionClient, endpointId: string): Promise<boolean> {
  const ended = await tx.endpointFlow.updateMany({
    where: { endpointId, pauseReason: "not_responding" },
    data: FRESH_FLOW,
  });
  if (ended.count === 1) return true;
  await tx.endpointFlow.updateMany({ where: { endpointId }, data: FRESH_FLOW });
  return false;
}

type EndpointInput = AuthInput & {
  url?: string;
  description?: string;
  event_types?: string[];
  headers?: Record<string, string>;
  disabled?: boolean;
  rate_limit?: number | null;
  max_in_flight?: number | null;
  ordering?: "none" | "fifo";
  filter?: Record<string, unknown> | null;
  transformation?: string | null;
};

/** The endpoint's app operational (it receives Herald's own types); on update, its transformation. */
type Checking = { req: Answerable; operational: boolean; transformation?: string | null };

/** The endpoint's input checked, for `account`'s request `req`. */
async function checkedInput(deps: Deps, account: Account, body: EndpointInput, checking: Checking) {
  const { req, operational } = checking;
  return {
    ...(body.url !== undefined ? { url: checkEndpointUrl(body.url, deps.config.destinationTypes).url } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.event_types !== undefined
      ? {
          eventTypes: operational
            ? checkOperationalTypes(body.event_types)
            : await checkEventTypes(deps.prisma, account.id, body.event_types),
        }
      : {}),
    ...(body.headers !== undefined ? { headers: checkHeaders(body.headers) } : {}),
    ...(body.rate_limit !== undefined ? { rateLimit: body.rate_limit } : {}),
    ...(body.max_in_flight !== undefined ? { maxInFlight: body.max_in_flight } : {}),
    ...(body.ordering !== undefined ? { ordering: body.ordering } : {}),
    ...(body.filter !== undefined ? { filter: checkFilter(body.filter) } : {}),
    ...(body.transformation !== undefined
      ? {
          // The one saved sent back (a form resends every field): compiled when it was saved,
          // so neither compiled again nor counted against the rate.
          transformation:
            body.transformation === checking.transformation
              ? body.transformation
              : await checkTransformation(deps, account, req, body.transformation),
        }
      : {}),
    ...(body.disabled !== undefined
      ? {
          disabled: body.disabled,
          disabledReason: body.disabled ? "Disabled through the API." : null,
          failingSince: null,
        }
      : {}),
  };
}

export type CreateInput = EndpointInput & { url: string; secret?: string };

/**
 * Creates an endpoint of `app` (named by `ref` in `req`), checked, with its secret, and records
 * it in the audit log with it.
 */
export async function createEndpoint(
  deps: Deps,
  account: Account,
  req: Answerable,
  app: { id: string; ref: string; operational: boolean },
  body: CreateInput,
  audit: Ctx["audit"],
) {
  const input = await checkedInput(deps, account, body, { req, operational: app.operational });
  checkAuthFits(input.url!, body);
  const credentials = checkEndpointUrl(body.url, deps.config.destinationTypes).credentials;
  if (credentials === "kept")
    throw invalid(
      "url",
      "The URL's user info is `[redacted]`: a new endpoint has no saved credentials; send them.",
    );
  const secret = body.secret !== undefined ? checkSecret(body.secret) : generateSecret();
  const id = newId("endpoint");
  const created = await withLiveApp(deps.prisma, { id: app.id, ref: app.ref, param: "app" }, async (tx) => {
    await checkEndpointRoom(tx, app.id, app.ref, deps.config.endpointsPerAppMax);
    await audit(tx, { type: "endpoint", id });
    return tx.endpoint.create({
      data: {
        id,
        accountId: account.id,
        appId: app.id,
        url: input.url!,
        ...input,
        ...(input.headers ? sealHeaders(deps.secrets, id, input.headers) : {}),
        ...authColumns(deps.secrets, id, body, {}, credentials ?? undefined),
        secret: deps.secrets.seal(secret, endpointSecretContext(id)),
        flow: { create: {} },
      },
      include: { flow: true },
    });
  });
  return serializeEndpoint(created);
}

/**
 * Marks the endpoint deleted and announces it (`endpoint.deleted.v1`: the dispatcher drops its
 * open deliveries), in one transaction, with its audit record when a request deletes it; false
 * when it was deleted already.
 */
export async function deleteEndpoint(
  deps: Deps,
  accountId: string,
  endpointId: string,
  audit?: Ctx["audit"],
): Promise<boolean> {
  const deletedAt = new Date();
  const row = await deps.prisma.$transaction(async (tx) => {
    const changed = await tx.endpoint.updateMany({
      where: { id: endpointId, accountId, deletedAt: null },
      data: { deletedAt },
    });
    if (changed.count === 0) return null;
    await audit?.(tx, { type: "endpoint", id: endpointId });
    return deps.outbox.stage(tx, "endpoint.deleted.v1", {
      endpoint_id: endpointId,
      account_id: accountId,
      deleted_at: deletedAt.toISOString(),
    });
  });
  if (row) deps.outbox.publishAfterCommit([row]);
  return row !== null;
}

export const endpointRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/endpoints",
    auth: "account",
    scope: "endpoints:write",
    audit: "endpoint.created",
    portal: "write",
    tag: "Endpoints",
    summary: "Create an endpoint",
    description:
      "Registers a URL of one app. Without `secret` a new one is made; read it with `GET /v3/endpoints/{id}/secret`.",
    formJson: ["filter"],
    body: {
      type: "object",
      additionalProperties: false,
      required: ["app", "url"],
      properties: {
        app: appRef,
        ...endpointFields,
        ...authFields,
        secret: {
          type: "string",
          description: "A signing secret of your own: `whsec_` and base64 of 24 to 64 bytes.",
        },
      },
    },
    response: { status: 201, schema: ref("Endpoint"), description: "The endpoint." },
    async handler({ account, body, deps, req, audit }: Ctx<object, object, CreateInput & { app: string }>) {
      const app = await resolveApp(deps.prisma, account.id, body.app, "app");
      checkAppReach(account, app.id, "app", body.app, "app");
      const created = await createEndpoint(deps, account, req, { ...app, ref: body.app }, body, audit);
      return { status: 201, body: created };
    },
  },
  {
    method: "get",
    path: "/v3/endpoints",
    auth: "account",
    scope: "endpoints:read",
    portal: "read",
    tag: "Endpoints",
    summary: "List endpoints",
    query: { type: "object", additionalProperties: false, properties: { app: appRef, ...pagingProperties } },
    response: { status: 200, schema: listOf("Endpoint"), description: "A page of endpoints, newest first." },
    async handler({ account, query, deps }: Ctx<object, PageQuery & { app?: string }>) {
      const apps = await listAppFilter(deps, account, query.app);
      return { body: await endpointPage(deps, account.id, appIdWhere(apps), query) };
    },
  },
  {
    method: "get",
    path: "/v3/endpoints/{id}",
    auth: "account",
    scope: "endpoints:read",
    portal: "read",
    tag: "Endpoints",
    summary: "Retrieve an endpoint",
    params: byId,
    response: { status: 200, schema: ref("Endpoint"), description: "The endpoint." },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const endpoint = await findEndpoint(deps.prisma, account, params.id);
      const heldBy = endpoint.flow?.heldBy;
      const held =
        heldBy === "ordering" || heldBy === "fan_out"
          ? await heldBehind(deps, endpoint.id, heldBy === "fan_out")
          : null;
      return { body: serializeEndpoint(endpoint, held) };
    },
  },
  {
    method: "post",
    path: "/v3/endpoints/{id}",
    auth: "account",
    scope: "endpoints:write",
    audit: "endpoint.updated",
    portal: "write",
    tag: "Endpoints",
    summary: "Update an endpoint",
    description:
      "Fields you send replace the current ones (`headers` as a whole map, where a value of exactly `[redacted]` keeps the one saved). Enabling clears `disabled_reason`; `filter: null` removes the filter, `transformation: null` the transformation.",
    formJson: ["filter"],
    params: byId,
    body: { type: "object", additionalProperties: false, properties: { ...endpointFields, ...authFields } },
    response: { status: 200, schema: ref("Endpoint"), description: "The updated endpoint." },
    async handler({ account, params, body, deps, req, audit }: Ctx<{ id: string }, object, EndpointInput>) {
      const found = await findEndpoint(deps.prisma, account, params.id);
      checkNotListening(found);
      const { operational } = found.app;
      const input = await checkedInput(deps, account, body, {
        req,
        operational,
        transformation: found.transformation,
      });
      const updated = await deps.prisma.$transaction(async (tx) => {
        // The endpoint's row before its flow's, the order results lock them in (the lifecycle's
        // locks.ts: flows last); the other way round, a result for this endpoint could deadlock.
        // Locked and read again first: what is kept (headers, secrets) is checked against the
        // row as this update changes it, not as another update at once left it.
        await tx.$executeRaw`SELECT 1 FROM endpoints WHERE id = ${found.id} FOR UPDATE`;
        const current = await tx.endpoint.findUniqueOrThrow({ where: { id: found.id } });
        await audit(tx, { type: "endpoint", id: found.id });
        const savedAuth = openAuth(deps.secrets, current);
        const credentials =
          body.url !== undefined
            ? checkEndpointUrl(body.url, deps.config.destinationTypes).credentials
            : undefined;
        if (input.url) {
          checkHeadersFollow(current, input.url, input.headers);
          checkTokenFollows(current, input.url, body.oauth2);
          checkCredentialsFollow(current, savedAuth, input.url, credentials!);
        }
        checkAuthFits(input.url ?? current.url, body);
        // `disabled` first, by a conditional update: of requests disabling (or enabling) it at
        // once, only the one that changed it finds it changed, and tells of it.
        const flipped =
          body.disabled !== undefined &&
          (
            await tx.endpoint.updateMany({
              where: { id: found.id, deletedAt: null, disabled: !body.disabled },
              data: { disabled: body.disabled },
            })
          ).count === 1;
        const headers = input.headers
          ? sealHeaders(
              deps.secrets,
              found.id,
              keepRedacted(input.headers, openHeaders(deps.secrets, current)),
            )
          : {};
        const auth = authColumns(deps.secrets, found.id, body, savedAuth, credentials) ?? {};
        const endpoint = await tx.endpoint.update({
          where: { id: found.id },
          data: { ...input, ...headers, ...auth, updatedAt: new Date() },
          include: { flow: true },
        });
        // Told to the operational endpoints in this transaction, so never lost (operational.ts).
        const notices: Notice[] = [];
        if (flipped && body.disabled) notices.push(disabledByHand(found.id, endpoint.updatedAt));
        // Enabled again, or a new URL: a pause or slow-down of what was there before is over.
        const enabled = flipped && body.disabled === false;
        const moved = input.url !== undefined && input.url !== current.url;
        if (!enabled && !moved) return { endpoint, told: await stageInPrisma(tx, notices) };
        const pauseEnded = await freshFlow(tx, found.id);
        // Told once the endpoint is sent to again: not while it stays disabled.
        if ((enabled || pauseEnded) && !endpoint.disabled)
          notices.push(recoveredByHand(found.id, endpoint.updatedAt, enabled ? "enabled" : "new_url"));
        return {
          endpoint: await tx.endpoint.findUniqueOrThrow({ where: { id: found.id }, include: { flow: true } }),
          told: await stageInPrisma(tx, notices),
        };
      });
      deps.outbox.publishAfterCommit(updated.told);
      return { body: serializeEndpoint(updated.endpoint) };
    },
  },
  {
    method: "delete",
    path: "/v3/endpoints/{id}",
    auth: "account",
    scope: "endpoints:write",
    audit: "endpoint.deleted",
    portal: "write",
    tag: "Endpoints",
    summary: "Delete an endpoint",
    description:
      "Nothing more is sent to it. Its pending retries are dropped (those deliveries become `dropped`); its deliveries and attempts stay readable.",
    params: byId,
    response: { status: 200, schema: deletedSchema("endpoint"), description: "The endpoint was deleted." },
    async handler({ account, params, deps, audit }: Ctx<{ id: string }>) {
      const found = await findEndpoint(deps.prisma, account, params.id);
      if (!(await deleteEndpoint(deps, account.id, found.id, audit))) throw notFound("endpoint", found.id);
      return { body: deleted(found.id, "endpoint") };
    },
  },
];
