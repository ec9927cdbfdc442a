import { newId, Prisma, type PrismaClient } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { conflict, invalid, notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { exampleOrNull } from "../../schemas/example.ts";
import { iso, timestamp } from "../common.ts";
import { assertSchema, schemaRequester } from "./schemaCheck.ts";

type EventTypeRow = {
  name: string;
  description: string;
  schema: unknown;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

export const serializeEventType = (t: EventTypeRow) => ({
  object: "event_type" as const,
  name: t.name,
  description: t.description,
  schema: t.schema ?? null,
  // Made from the schema each time, within its budget: the portal's catalog and its test events use it.
  example: t.schema ? exampleOrNull(t.schema) : null,
  archived: t.archivedAt !== null,
  created_at: iso(t.createdAt),
  updated_at: iso(t.updatedAt),
});

export const NAME_MAX = 64;

/** The naming rule an event type name breaks, or null. The `<noun>.<past-tense verb>` form is advice. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "name must not be empty.";
  if (name.length > NAME_MAX) return `name must be at most ${NAME_MAX} characters; it has ${name.length}.`;
  const bad = /[^a-z0-9._]/.exec(name)?.[0];
  if (bad === undefined) return null;
  const what = /[A-Z]/.test(bad) ? `uppercase letter '${bad}'` : bad === " " ? "a space" : `'${bad}'`;
  return `name may contain only lowercase letters, digits, dots and underscores; it has ${what}.`;
}

const nameParam: Schema = {
  type: "string",
  maxLength: 1000,
  description:
    "1 to 64 of a-z 0-9 . _ — permanent. Recommended form: `<noun>.<past-tense verb>`, e.g. `invoice.paid`.",
};
const description: Schema = {
  type: "string",
  maxLength: 4096,
  description: "What the event means, for your customers.",
};
// Untyped on purpose: whatever is not a JSON Schema object is refused by assertSchema with
// the specific `invalid_schema` error rather than a generic type error.
const schema: Schema = {
  description:
    "A JSON Schema object that every event of this type must match (`null` for none). In a form body, a JSON string. At most 65,536 bytes and 32 levels deep, with at most 1,000 subschemas applying to one value at any depth of the data and an example of at most 1,000 values; `$ref`s stay within the schema (`#/…` or `#anchor`); patterns run on RE2 (no lookaround or backreferences). Over a limit: `400 invalid_schema`, the limit named.",
};

export const eventTypeSchemas: Record<string, Schema> = {
  EventType: {
    type: "object",
    required: ["object", "name", "description", "schema", "example", "archived", "created_at", "updated_at"],
    properties: {
      object: { const: "event_type" },
      name: { type: "string", examples: ["invoice.paid"] },
      description: { type: "string" },
      schema: { type: ["object", "null"] },
      example: {
        description:
          "An example payload made from the schema (its own examples and defaults first), or null without one.",
      },
      archived: { type: "boolean" },
      created_at: timestamp,
      updated_at: timestamp,
    },
  },
};

export async function findEventType(
  prisma: Pick<PrismaClient, "eventType">,
  accountId: string,
  name: string,
  param = "name",
) {
  const found = await prisma.eventType.findUnique({ where: { accountId_name: { accountId, name } } });
  if (!found) throw notFound("event type", name, param);
  return found;
}

const byName = { name: "The event type's name." };

function archiveRoute(
  path: string,
  summary: string,
  archived: boolean,
  audit: string,
  description?: string,
): RouteSpec {
  return {
    method: path.endsWith("}") ? "delete" : "post",
    path,
    auth: "account",
    scope: "event_types:write",
    audit,
    tag: "Event types",
    summary,
    ...(description ? { description } : {}),
    params: byName,
    response: { status: 200, schema: ref("EventType"), description: "The event type." },
    async handler({ account, params, deps, audit }: Ctx<{ name: string }>) {
      const found = await findEventType(deps.prisma, account.id, params.name);
      const updated = await deps.prisma.$transaction(async (tx) => {
        await audit(tx, { type: "event_type", id: found.name });
        return tx.eventType.update({
          where: { id: found.id },
          data: { archivedAt: archived ? (found.archivedAt ?? new Date()) : null, updatedAt: new Date() },
        });
      });
      deps.caches.eventTypes.clear();
      return { body: serializeEventType(updated) };
    },
  };
}

export const eventTypeRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/event-types",
    auth: "account",
    scope: "event_types:write",
    audit: "event_type.created",
    tag: "Event types",
    summary: "Create an event type",
    description:
      "Names are permanent and unique in the account, archived ones included. A `schema` is checked against the JSON Schema meta-schema and compiled now: an invalid one is a 400 `invalid_schema`.",
    body: {
      type: "object",
      additionalProperties: false,
      required: ["name"],
      properties: { name: nameParam, description, schema },
    },
    formJson: ["schema"],
    response: { status: 201, schema: ref("EventType"), description: "The event type." },
    async handler({
      account,
      body,
      deps,
      audit,
    }: Ctx<object, object, { name: string; description?: string; schema?: object | null }>) {
      const problem = nameProblem(body.name);
      if (problem) throw invalid("name", problem);
      if (body.schema !== undefined && body.schema !== null)
        await assertSchema(deps, schemaRequester(account), body.schema);
      try {
        const created = await deps.prisma.$transaction(async (tx) => {
          await audit(tx, { type: "event_type", id: body.name });
          return tx.eventType.create({
            data: {
              id: newId("eventType"),
              accountId: account.id,
              name: body.name,
              description: body.description ?? "",
              ...(body.schema ? { schema: body.schema } : {}),
            },
          });
        });
        return { status: 201, body: serializeEventType(created) };
      } catch (err) {
        if ((err as { code?: string }).code === "P2002") {
          throw conflict(
            "resource_exists",
            `An event type named '${body.name}' already exists (names are permanent, archived ones included).`,
            "name",
          );
        }
        throw err;
      }
    },
  },
  {
    method: "get",
    path: "/v3/event-types",
    auth: "account",
    scope: "event_types:read",
    portal: "read",
    tag: "Event types",
    summary: "List event types",
    description: "Cursors are event type names.",
    query: {
      type: "object",
      additionalProperties: false,
      properties: {
        ...pagingProperties,
        starting_after: {
          type: "string",
          description: "An event type name from the list: the types after it.",
        },
        ending_before: {
          type: "string",
          description: "An event type name from the list: the types before it.",
        },
        include_archived: { type: "boolean", default: false, description: "Include archived event types." },
      },
    },
    response: {
      status: 200,
      schema: listOf("EventType"),
      description: "A page of event types, newest first.",
    },
    async handler({ account, query, deps }: Ctx<object, PageQuery & { include_archived: boolean }>) {
      const cursor = await cursorOf(query, async (name) => {
        const found = await deps.prisma.eventType.findUnique({
          where: { accountId_name: { accountId: account.id, name } },
        });
        return found?.id ?? null;
      });
      const rows = await deps.prisma.eventType.findMany({
        where: {
          accountId: account.id,
          ...(query.include_archived ? {} : { archivedAt: null }),
          ...(cursor.id ? { id: cursor.id } : {}),
        },
        orderBy: { id: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serializeEventType) } };
    },
  },
  {
    method: "get",
    path: "/v3/event-types/{name}",
    auth: "account",
    scope: "event_types:read",
    portal: "read",
    tag: "Event types",
    summary: "Retrieve an event type",
    params: byName,
    response: { status: 200, schema: ref("EventType"), description: "The event type." },
    async handler({ account, params, deps }: Ctx<{ name: string }>) {
      return { body: serializeEventType(await findEventType(deps.prisma, account.id, params.name)) };
    },
  },
  {
    method: "post",
    path: "/v3/event-types/{name}",
    auth: "account",
    scope: "event_types:write",
    audit: "event_type.updated",
    tag: "Event types",
    summary: "Update an event type",
    description:
      "Changes `description` and `schema` (`null` removes it). Names are permanent: there is no rename.",
    params: byName,
    body: {
      type: "object",
      additionalProperties: false,
      properties: { name: nameParam, description, schema },
    },
    formJson: ["schema"],
    response: { status: 200, schema: ref("EventType"), description: "The updated event type." },
    async handler({
      account,
      params,
      body,
      deps,
      audit,
    }: Ctx<{ name: string }, object, { name?: string; description?: string; schema?: object | null }>) {
      const found = await findEventType(deps.prisma, account.id, params.name);
      if (body.name !== undefined && body.name !== found.name) {
        throw invalid(
          "name",
          "Event type names are permanent and cannot be changed; archive this type and create a new one.",
        );
      }
      if (body.schema !== undefined && body.schema !== null)
        await assertSchema(deps, schemaRequester(account), body.schema);
      const updated = await deps.prisma.$transaction(async (tx) => {
        await audit(tx, { type: "event_type", id: found.name });
        return tx.eventType.update({
          where: { id: found.id },
          data: {
            ...(body.description !== undefined ? { description: body.description } : {}),
            ...(body.schema !== undefined ? { schema: body.schema ?? Prisma.DbNull } : {}),
            updatedAt: new Date(),
          },
        });
      });
      deps.caches.eventTypes.clear();
      return { body: serializeEventType(updated) };
    },
  },
  archiveRoute(
    "/v3/event-types/{name}/archive",
    "Archive an event type",
    true,
    "event_type.archived",
    "An archived type accepts no new events and stays in the logs.",
  ),
  archiveRoute("/v3/event-types/{name}/unarchive", "Unarchive an event type", false, "event_type.unarchived"),
  archiveRoute(
    "/v3/event-types/{name}",
    "Delete (archive) an event type",
    true,
    "event_type.deleted",
    "Names are permanent, so deleting archives the type.",
  ),
];
