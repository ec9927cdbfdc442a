import { isId, type Prisma } from "@herald/db";
import type { Ctx } from "../context.ts";
import { invalid } from "../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../http/paging.ts";
import { listOf, type RouteSpec, type Schema } from "../http/route.ts";
import { iso, parseTime, timeInput, timestamp } from "../resources/common.ts";

type Row = Prisma.AuditRecordGetPayload<object>;

const serialize = (r: Row) => ({
  id: r.id,
  object: "audit_record" as const,
  action: r.action,
  actor: { type: r.actorType, id: r.actorId, name: r.actorName },
  target: { type: r.objectType, id: r.objectId },
  fields: r.fields ?? [],
  request_id: r.requestId,
  source_ip: r.sourceIp,
  created_at: iso(r.createdAt),
});

export const auditSchemas: Record<string, Schema> = {
  AuditRecord: {
    type: "object",
    required: [
      "id",
      "object",
      "action",
      "actor",
      "target",
      "fields",
      "request_id",
      "source_ip",
      "created_at",
    ],
    properties: {
      id: { type: "string", examples: ["aud_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "audit_record" },
      action: {
        type: "string",
        examples: ["endpoint.updated"],
        description:
          "What was done, `<object>.<verb>`: `app.created`, `endpoint.secret_rotated`, `api_key.revoked`, `session.opened`… Each operation's is `x-herald-audit` in this document.",
      },
      actor: {
        type: "object",
        required: ["type", "id", "name"],
        properties: {
          type: { enum: ["api_key", "dashboard_session", "portal_session", "person", "operator"] },
          id: {
            type: "string",
            description: "The key's or the session's id; `admin_token` for the operator.",
          },
          name: { type: ["string", "null"], description: "A signed-in person's email." },
        },
      },
      target: {
        type: "object",
        required: ["type", "id"],
        properties: {
          type: { type: "string", examples: ["endpoint"] },
          id: { type: ["string", "null"], description: "Its id (an event type's name)." },
        },
      },
      fields: {
        type: "array",
        items: { type: "string" },
        description: "The names of the fields the request sent. Never their values.",
      },
      request_id: { type: ["string", "null"], description: "The request's `Request-Id`." },
      source_ip: { type: ["string", "null"], description: "The address the request came from." },
      created_at: timestamp,
    },
  },
};

type Query = PageQuery & {
  actor?: string;
  action?: string;
  object?: string;
  since?: string | number;
  until?: string | number;
};

function timeOf(value: string | number, param: string): Date {
  const at = parseTime(value);
  if (Number.isNaN(at.getTime())) throw invalid(param, `${param} is not a valid time.`);
  return at;
}

export const auditRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/audit-log",
    auth: "account",
    scope: "audit_log:read",
    tag: "Audit log",
    summary: "List the audit log",
    description:
      "Every change made to the account through the API, the dashboard or the portal, newest first: who made it, what it changed, the request and where it came from. Records are kept as long as the account's events, or `AUDIT_RETENTION` when that is longer.",
    query: {
      type: "object",
      additionalProperties: false,
      properties: {
        ...pagingProperties,
        actor: {
          type: "string",
          maxLength: 320,
          description: "Only this actor's: a key's or a session's id, or a person's email.",
        },
        action: {
          type: "string",
          maxLength: 100,
          description:
            "Only this action (`endpoint.updated`), or every action on a kind of object (`endpoint.`).",
        },
        object: { type: "string", maxLength: 256, description: "Only changes to this object (its id)." },
        since: { ...timeInput, description: "Only records made at or after this time." },
        until: { ...timeInput, description: "Only records made before this time." },
      },
    },
    response: { status: 200, schema: listOf("AuditRecord"), description: "A page of records, newest first." },
    async handler({ account, query, deps }: Ctx<object, Query>) {
      const cursor = await cursorOf(query, (id) => (isId("auditRecord", id) ? id : null));
      const createdAt = {
        ...(query.since !== undefined ? { gte: timeOf(query.since, "since") } : {}),
        ...(query.until !== undefined ? { lt: timeOf(query.until, "until") } : {}),
      };
      const rows = await deps.prisma.auditRecord.findMany({
        where: {
          accountId: account.id,
          ...(cursor.id ? { id: cursor.id } : {}),
          ...(query.actor !== undefined
            ? { OR: [{ actorId: query.actor }, { actorName: query.actor }] }
            : {}),
          ...(query.action !== undefined
            ? { action: query.action.endsWith(".") ? { startsWith: query.action } : query.action }
            : {}),
          ...(query.object !== undefined ? { objectId: query.object } : {}),
          ...(Object.keys(createdAt).length ? { createdAt } : {}),
        },
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serialize) } };
    },
  },
];
