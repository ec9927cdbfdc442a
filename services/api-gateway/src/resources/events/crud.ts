import { REQUEST_BODY_MAX_BYTES } from "@herald/contracts";
import { DELIVERY_STATUSES } from "@herald/contracts/statuses";
import { isId, type PrismaClient } from "@herald/db";
import type { Account, Ctx } from "../../context.ts";
import { invalid, notFound } from "../../http/errors.ts";
import { type Cursor, cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
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
import { DELIVERIES_SHOWN, type DeliveryRow, deliveriesOf, serializeDelivery } from "./deliveries.ts";
import { sendBodySchema, sendEvent } from "./send.ts";

/**
 * A page's payloads together, at most, as accepted (one event alone may be larger): a page of a
 * hundred events of a megabyte would be a hundred megabytes parsed on the gateway's heap.
 */
export const PAGE_DATA_BYTES = 2 * 1024 * 1024;

type Listed = Omit<EventRow, "data"> & { dataBytes: number | null };

/**
 * The page (`toList`) cut where its payloads pass PAGE_DATA_BYTES, nearest the cursor kept, then
 * their payloads read: rows arrive in the cursor's order, the extra one telling `has_more`.
 */
async function withPayloads(prisma: PrismaClient, rows: Listed[], cursor: Cursor, limit: number) {
  let bytes = 0;
  let kept = 0;
  for (const row of rows.slice(0, limit)) {
    bytes += row.dataBytes ?? REQUEST_BODY_MAX_BYTES;
    if (kept > 0 && bytes > PAGE_DATA_BYTES) break;
    kept++;
  }
  const list = toList(rows.slice(0, kept === limit ? limit + 1 : kept + 1), cursor, kept);
  const data = await prisma.event.findMany({
    where: { id: { in: list.data.map((e) => e.id) } },
    select: { id: true, data: true },
  });
  const byId = new Map(data.map((d) => [d.id, d.data]));
  return { ...list, data: list.data.map(({ dataBytes: _, ...e }) => ({ ...e, data: byId.get(e.id) ?? {} })) };
}

type EventRow = {
  id: string;
  appId: string;
  type: string;
  data: unknown;
  createdAt: Date;
  dataErasedAt: Date | null;
};

export const serializeEvent = (e: EventRow, deliveries = { rows: [] as DeliveryRow[], more: false }) => ({
  id: e.id,
  object: "event" as const,
  app: e.appId,
  type: e.type,
  data: e.data,
  data_erased_at: e.dataErasedAt ? iso(e.dataErasedAt) : null,
  created_at: iso(e.createdAt),
  deliveries: deliveries.rows.map(serializeDelivery),
  deliveries_has_more: deliveries.more,
});

export const eventSchemas: Record<string, Schema> = {
  Delivery: {
    type: "object",
    required: ["endpoint", "status", "attempts", "last_attempt_at", "next_attempt_at"],
    properties: {
      endpoint: { type: "string" },
      status: {
        enum: [...DELIVERY_STATUSES],
        description:
          "`pending`: an attempt is scheduled or in flight. `succeeded`: an attempt got a 2xx. `retrying`: the last attempt failed and another is scheduled. `failed`: the schedule ran out or the endpoint was disabled (a replay puts it back to `pending`). `dropped`: the endpoint was deleted, or the event's payload erased, while an attempt was due. `cancelled`: the endpoint's transformation cancelled it (`cancel: true`); nothing was sent.",
      },
      attempts: { type: "integer", description: "Attempts made so far." },
      last_attempt_at: nullableTimestamp,
      next_attempt_at: nullableTimestamp,
    },
  },
  Event: {
    type: "object",
    required: [
      "id",
      "object",
      "app",
      "type",
      "data",
      "data_erased_at",
      "created_at",
      "deliveries",
      "deliveries_has_more",
    ],
    properties: {
      id: { type: "string", examples: ["evt_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "event" },
      app: { type: "string" },
      type: { type: "string", examples: ["invoice.paid"] },
      data: { type: "object", description: "The payload, as sent; `{}` once erased." },
      data_erased_at: {
        ...nullableTimestamp,
        description: "When the payload was erased (`DELETE /v3/events/{id}/data`); null while it is kept.",
      },
      created_at: timestamp,
      deliveries: {
        type: "array",
        items: { $ref: "#/components/schemas/Delivery" },
        description: `One per receiving endpoint, the first ${DELIVERIES_SHOWN} by endpoint id. Fan-out is asynchronous: this fills in as the dispatcher works.`,
      },
      deliveries_has_more: {
        type: "boolean",
        description:
          "Whether the event has more deliveries than shown: page through them with `GET /v3/events/{id}/deliveries`.",
      },
    },
  },
};

type ListQuery = PageQuery & { app?: string; type?: string; status?: string; endpoint?: string };

/**
 * The endpoint an event list is filtered by: one of the caller's (deleted ones too, their
 * deliveries stay readable), and of a portal session's own app; else a 404.
 */
async function endpointFilter(
  prisma: Pick<PrismaClient, "endpoint" | "app">,
  account: Account,
  id: string | undefined,
): Promise<string | undefined> {
  if (id === undefined) return undefined;
  if (!isId("endpoint", id))
    throw invalid("endpoint", `endpoint must be an endpoint id (ep_…), got '${id}'.`);
  const found = await prisma.endpoint.findFirst({
    where: { id, accountId: account.id },
    select: { id: true, appId: true },
  });
  if (!found) throw notFound("endpoint", id, "endpoint");
  checkAppReach(account, found.appId, "endpoint", id, "endpoint");
  await checkAppLive(prisma, found.appId, "endpoint", id, "endpoint");
  return found.id;
}

export const eventRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/events",
    auth: "account",
    scope: "events:write",
    audit: false,
    portal: "write",
    tag: "Events",
    summary: "Send an event",
    description:
      "Stores the event and queues it for every endpoint of the app that receives its type. The type must exist and not be archived. When the type has a schema, `data` that does not match is a 422 listing each violation, and the event is neither stored nor delivered.",
    body: sendBodySchema,
    formJson: ["data"],
    response: { status: 201, schema: ref("Event"), description: "The event, accepted." },
    handler: sendEvent,
  },
  {
    method: "get",
    path: "/v3/events",
    auth: "account",
    scope: "events:read",
    portal: "read",
    tag: "Events",
    summary: "List events",
    description:
      "Newest first. Filters combine: with `endpoint` and `status` together, only events whose delivery to that endpoint is in that status. A page holds `limit` events, or fewer when their payloads pass 2 MiB together (at least one): `has_more` then says more are there.",
    query: {
      type: "object",
      additionalProperties: false,
      properties: {
        app: appRef,
        type: { type: "string", description: "Only events of this type." },
        status: {
          enum: [...DELIVERY_STATUSES],
          description: "Only events with at least one delivery in this status.",
        },
        endpoint: {
          type: "string",
          description:
            "Only events with a delivery to this endpoint (an endpoint id, deleted ones included).",
        },
        ...pagingProperties,
      },
    },
    response: {
      status: 200,
      schema: listOf("Event"),
      description: "A page of events with their deliveries, newest first.",
    },
    async handler({ account, query, deps }: Ctx<object, ListQuery>) {
      const apps = await listAppFilter(deps, account, query.app, query.endpoint !== undefined);
      const endpointId = await endpointFilter(deps.prisma, account, query.endpoint);
      const cursor = await cursorOf(query, (id) => (isId("event", id) ? id : null));
      const delivery = {
        ...(endpointId ? { endpointId } : {}),
        ...(query.status ? { status: query.status } : {}),
      };
      const rows = await deps.prisma.event.findMany({
        where: {
          accountId: account.id,
          ...appIdWhere(apps),
          ...(query.type ? { type: query.type } : {}),
          ...(endpointId || query.status ? { deliveries: { some: delivery } } : {}),
          ...(cursor.id ? { id: cursor.id } : {}),
        },
        orderBy: { id: cursor.order },
        take: cursor.take,
        select: { id: true, appId: true, type: true, createdAt: true, dataErasedAt: true, dataBytes: true },
      });
      const list = await withPayloads(deps.prisma, rows, cursor, query.limit);
      const deliveries = await deliveriesOf(
        deps.prisma,
        list.data.map((e) => e.id),
      );
      return { body: { ...list, data: list.data.map((e) => serializeEvent(e, deliveries.get(e.id))) } };
    },
  },
  {
    method: "get",
    path: "/v3/events/{id}",
    auth: "account",
    scope: "events:read",
    portal: "read",
    tag: "Events",
    summary: "Retrieve an event",
    description: "The event with its payload and one delivery per receiving endpoint.",
    params: { id: "The event's id." },
    response: { status: 200, schema: ref("Event"), description: "The event." },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const event = isId("event", params.id)
        ? await deps.prisma.event.findFirst({ where: { id: params.id, accountId: account.id } })
        : null;
      if (!event) throw notFound("event", params.id);
      checkAppReach(account, event.appId, "event", params.id);
      await checkAppLive(deps.prisma, event.appId, "event", params.id);
      const deliveries = await deliveriesOf(deps.prisma, [event.id]);
      return { body: serializeEvent(event, deliveries.get(event.id)) };
    },
  },
];
