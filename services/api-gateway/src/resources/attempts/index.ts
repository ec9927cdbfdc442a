import { ERROR_KINDS, madeNoRequest, redactHeaders, webhookPayload } from "@herald/contracts";
import { ATTEMPT_STATUSES } from "@herald/contracts/statuses";
import { isId, type PrismaClient } from "@herald/db";
import type { Account, Ctx, Deps } from "../../context.ts";
import { notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import {
  appIdWhere,
  appRef,
  checkAppLive,
  checkAppReach,
  iso,
  listAppFilter,
  nullableTimestamp,
  timestamp,
} from "../common.ts";

type AttemptRow = {
  id: string;
  eventId: string;
  endpointId: string;
  appId: string;
  status: string;
  attemptNumber: number;
  url: string;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number | null;
  traceId: string | null;
  scheduledAt: Date;
  sentAt: Date | null;
  createdAt: Date;
  completedAt: Date | null;
};

export const serializeAttempt = (a: AttemptRow) => ({
  id: a.id,
  object: "attempt" as const,
  event: a.eventId,
  endpoint: a.endpointId,
  app: a.appId,
  status: a.status,
  attempt_number: a.attemptNumber,
  url: a.url,
  response_status: a.responseStatus,
  response_body: a.responseBody,
  error: a.error,
  duration_ms: a.durationMs,
  trace_id: a.traceId,
  scheduled_at: iso(a.scheduledAt),
  sent_at: iso(a.sentAt),
  created_at: iso(a.createdAt),
  completed_at: iso(a.completedAt),
});

const attemptSchema: Schema = {
  type: "object",
  required: [
    "id",
    "object",
    "event",
    "endpoint",
    "app",
    "status",
    "attempt_number",
    "url",
    "response_status",
    "response_body",
    "error",
    "duration_ms",
    "trace_id",
    "scheduled_at",
    "sent_at",
    "created_at",
    "completed_at",
  ],
  properties: {
    id: { type: "string", examples: ["atmpt_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
    object: { const: "attempt" },
    event: { type: "string" },
    endpoint: { type: "string" },
    app: { type: "string" },
    status: {
      enum: [...ATTEMPT_STATUSES],
      description:
        "`pending` until its sender reports, then `succeeded` or `failed` (see `error`), or `cancelled`: the endpoint's transformation cancelled it, and no request was made.",
    },
    attempt_number: { type: "integer", minimum: 1 },
    url: { type: "string" },
    response_status: { type: ["integer", "null"] },
    response_body: {
      type: ["string", "null"],
      description:
        "The first 4 KiB of the response body. With error `auth_error`, why no OAuth2 token could be had: of a token server's refusal, its status and its `error` and `error_description`, cut short, the credentials sent scrubbed, never its body.",
    },
    error: {
      type: ["string", "null"],
      description: `Why the attempt failed, one of: ${Object.entries(ERROR_KINDS)
        .map(([kind, meaning]) => `\`${kind}\`: ${meaning}`)
        .join(" ")}`,
    },
    duration_ms: { type: ["integer", "null"] },
    trace_id: { type: ["string", "null"], description: "The OpenTelemetry trace of the event." },
    scheduled_at: timestamp,
    sent_at: {
      ...nullableTimestamp,
      description:
        "When it was handed to a sender. `null` on a `pending` attempt that waits its turn: its retry is not due yet, or its endpoint's limits, pause or order (`fifo`) hold it.",
    },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
};

const requestSchema: Schema = {
  type: ["object", "null"],
  required: ["method", "url", "headers", "body", "transformed"],
  properties: {
    method: {
      type: "string",
      examples: ["POST"],
      description: "`POST`, or the method the endpoint's transformation set (`PUT`, `PATCH`).",
    },
    url: {
      type: "string",
      description: "Where it was sent: the attempt's `url`, or the one the endpoint's transformation set.",
    },
    headers: {
      type: ["object", "null"],
      additionalProperties: { type: "string" },
      description:
        "Every header Herald set (`content-type`, `user-agent`, `webhook-id`, `webhook-timestamp`, `webhook-signature`) and the endpoint's custom headers, as sent, except that a header that looks like a credential shows `[redacted]` in place of its value: `Authorization`, `Proxy-Authorization`, `Cookie`, and any name containing `token`, `secret`, `key`, `password`, `auth`, `session`, `signature` or `credential` (but `webhook-signature`, which is no secret). Herald never stores those values with an attempt; the receiver got them as set. Null while the attempt is pending, and for attempts made before Herald recorded them.",
      examples: [
        {
          "content-type": "application/json",
          "user-agent": "Herald-Webhooks/1.0",
          "webhook-id": "evt_01JD3Z6Q4X6N3V8H2K9T5R7M1B",
          "webhook-timestamp": "1795255200",
          "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
          "X-Tenant": "acme",
          Authorization: "[redacted]",
        },
      ],
    },
    body: {
      type: ["string", "null"],
      description:
        'The request body byte for byte: `{"type":…,"timestamp":…,"data":…}`, the same for every attempt of the event; or the body the endpoint\'s transformation made, its first 65,536 bytes. Null once the event\'s payload was erased.',
    },
    transformed: {
      type: "boolean",
      description:
        "Whether the endpoint's transformation made this request (docs/transformations.md): then `method`, `url` and `body` are its, as sent.",
    },
  },
  description:
    "The HTTP request of the attempt. Null when no request was made: on a `cancelled` attempt (its endpoint's transformation cancelled it), and on one whose `error` is `transformation_error` (the transformation failed; `response_body` says why) or `transformation_busy` (it was never run). Null too when its event no longer exists.",
};

export const attemptSchemas: Record<string, Schema> = {
  Attempt: attemptSchema,
  AttemptWithRequest: {
    ...attemptSchema,
    required: [...(attemptSchema.required as string[]), "request"],
    properties: { ...(attemptSchema.properties as Record<string, Schema>), request: requestSchema },
  },
};

type SentRow = {
  eventId: string;
  endpointId: string;
  status: string;
  error: string | null;
  url: string;
  requestHeaders: unknown;
  requestMethod: string | null;
  requestUrl: string | null;
  requestBody: string | null;
};

/**
 * The request an attempt sent: its recorded headers, and the body rebuilt as the dispatcher
 * built it, or the method, URL and body a transformation made, as the sender recorded them.
 */
async function requestOf(deps: Pick<Deps, "pool">, attempt: SentRow) {
  // No request was made: the transformation cancelled it, failed, or never ran. Herald's own
  // POST, rebuilt below, would show one that was never sent.
  if (attempt.status === "cancelled" || madeNoRequest(attempt.error)) return null;
  const { rows } = await deps.pool.query<{
    type: string;
    data: string;
    created_at: Date;
    erased: boolean;
    headers: object | null;
  }>(
    `SELECT ev.type, ev.data::text AS data, ev.created_at, ev.data_erased_at IS NOT NULL AS erased, ep.headers
     FROM events ev LEFT JOIN endpoints ep ON ep.id = $2 WHERE ev.id = $1`,
    [attempt.eventId, attempt.endpointId],
  );
  const event = rows[0];
  if (!event) return null;
  const { requestMethod, requestUrl, requestBody } = attempt;
  return {
    method: requestMethod ?? "POST",
    url: requestUrl ?? attempt.url,
    // Redacted again when shown, the endpoint's own header names included: attempts recorded
    // before senders redacted, or before custom header values were write-only, are covered too.
    headers: attempt.requestHeaders
      ? redactHeaders(attempt.requestHeaders as Record<string, string>, Object.keys(event.headers ?? {}))
      : null,
    body: event.erased ? null : (requestBody ?? webhookPayload(event.type, event.created_at, event.data)),
    transformed: requestMethod !== null || requestUrl !== null || requestBody !== null,
  };
}

type ListQuery = PageQuery & { endpoint?: string; event?: string; status?: string; app?: string };

/**
 * The endpoint or event a list is filtered by, checked as retrieving it would be: another
 * account's, another app's for a portal session, one of an app being deleted, and an id that
 * never was are a 404 at the filter, not an empty list. A deleted endpoint is still found: its
 * attempts stay readable.
 */
async function filterTarget(
  prisma: Pick<PrismaClient, "endpoint" | "event" | "app">,
  account: Account,
  kind: "endpoint" | "event",
  id: string | undefined,
): Promise<void> {
  if (id === undefined) return;
  const where = { where: { id, accountId: account.id }, select: { appId: true } };
  const found = !isId(kind, id)
    ? null
    : kind === "endpoint"
      ? await prisma.endpoint.findFirst(where)
      : await prisma.event.findFirst(where);
  if (!found) throw notFound(kind, id, kind);
  checkAppReach(account, found.appId, kind, id, kind);
  await checkAppLive(prisma, found.appId, kind, id, kind);
}

export const attemptRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/attempts",
    auth: "account",
    scope: "events:read",
    portal: "read",
    tag: "Attempts",
    summary: "List attempts",
    description:
      "Newest first. Filters combine. Attempts here leave out `request`: retrieve one attempt for its request headers and body.",
    query: {
      type: "object",
      additionalProperties: false,
      properties: {
        endpoint: {
          type: "string",
          description:
            "Only attempts to this endpoint (a deleted one too). One the caller cannot see is a 404.",
        },
        event: {
          type: "string",
          description: "Only attempts of this event. One the caller cannot see is a 404.",
        },
        status: { enum: [...ATTEMPT_STATUSES], description: "Only attempts in this status." },
        app: appRef,
        ...pagingProperties,
      },
    },
    response: { status: 200, schema: listOf("Attempt"), description: "A page of attempts, newest first." },
    async handler({ account, query, deps }: Ctx<object, ListQuery>) {
      const apps = await listAppFilter(
        deps,
        account,
        query.app,
        query.endpoint !== undefined || query.event !== undefined,
      );
      await filterTarget(deps.prisma, account, "endpoint", query.endpoint);
      await filterTarget(deps.prisma, account, "event", query.event);
      const cursor = await cursorOf(query, (id) => (isId("attempt", id) ? id : null));
      const rows = await deps.prisma.attempt.findMany({
        where: {
          accountId: account.id,
          ...(query.endpoint !== undefined ? { endpointId: query.endpoint } : {}),
          ...(query.event !== undefined ? { eventId: query.event } : {}),
          ...(query.status !== undefined ? { status: query.status } : {}),
          ...appIdWhere(apps),
          ...(cursor.id ? { id: cursor.id } : {}),
        },
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serializeAttempt) } };
    },
  },
  {
    method: "get",
    path: "/v3/attempts/{id}",
    auth: "account",
    scope: "events:read",
    portal: "read",
    tag: "Attempts",
    summary: "Retrieve an attempt",
    description:
      "The attempt with its `request` as sent: the headers the sender reported and the exact body. Only this route includes `request`; the list leaves it out.",
    params: { id: "The attempt's id." },
    response: {
      status: 200,
      schema: ref("AttemptWithRequest"),
      description: "The attempt, with its request.",
    },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const found = isId("attempt", params.id)
        ? await deps.prisma.attempt.findFirst({ where: { id: params.id, accountId: account.id } })
        : null;
      if (!found) throw notFound("attempt", params.id);
      checkAppReach(account, found.appId, "attempt", params.id);
      await checkAppLive(deps.prisma, found.appId, "attempt", params.id);
      return { body: { ...serializeAttempt(found), request: await requestOf(deps, found) } };
    },
  },
];
