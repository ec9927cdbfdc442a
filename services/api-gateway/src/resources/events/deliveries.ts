import { isId, Prisma, type PrismaClient } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { notFound } from "../../http/errors.ts";
import { cursorOf, type PageQuery, pagingProperties, toList } from "../../http/paging.ts";
import { listOf, type RouteSpec } from "../../http/route.ts";
import { checkAppLive, checkAppReach } from "../common.ts";

/**
 * An event's deliveries, one per endpoint it went to. An event shows at most DELIVERIES_SHOWN
 * of them (`deliveries_has_more` says when there are more: an app had more endpoints before
 * ENDPOINTS_PER_APP_MAX), and `GET /v3/events/{id}/deliveries` pages through all of them.
 */
export const DELIVERIES_SHOWN = 100;

export type DeliveryRow = {
  eventId: string;
  endpointId: string;
  status: string;
  attempts: number;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
};

/** The first DELIVERIES_SHOWN deliveries of each event (by endpoint), and whether it has more. */
export async function deliveriesOf(
  prisma: Pick<PrismaClient, "$queryRaw">,
  eventIds: string[],
): Promise<Map<string, { rows: DeliveryRow[]; more: boolean }>> {
  const byEvent = new Map<string, { rows: DeliveryRow[]; more: boolean }>();
  if (!eventIds.length) return byEvent;
  const rows = await prisma.$queryRaw<DeliveryRow[]>`
    SELECT event_id AS "eventId", endpoint_id AS "endpointId", status, attempts,
           last_attempt_at AS "lastAttemptAt", next_attempt_at AS "nextAttemptAt"
    FROM (SELECT d.*, row_number() OVER (PARTITION BY event_id ORDER BY endpoint_id) AS n
          FROM deliveries d WHERE event_id IN (${Prisma.join(eventIds)})) ranked
    WHERE n <= ${DELIVERIES_SHOWN + 1}
    ORDER BY event_id, endpoint_id`;
  for (const row of rows) {
    const entry = byEvent.get(row.eventId) ?? { rows: [], more: false };
    if (entry.rows.length < DELIVERIES_SHOWN) entry.rows.push(row);
    else entry.more = true;
    byEvent.set(row.eventId, entry);
  }
  return byEvent;
}

export const serializeDelivery = (d: DeliveryRow) => ({
  endpoint: d.endpointId,
  status: d.status,
  attempts: d.attempts,
  last_attempt_at: d.lastAttemptAt?.toISOString() ?? null,
  next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
});

export const eventDeliveryRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/events/{id}/deliveries",
    auth: "account",
    scope: "events:read",
    portal: "read",
    tag: "Events",
    summary: "List an event's deliveries",
    description:
      "Every delivery of the event, one per endpoint, by endpoint id (`starting_after` and `ending_before` take an endpoint id). The event itself shows the first 100.",
    params: { id: "The event's id." },
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("Delivery"), description: "A page of deliveries." },
    async handler({ account, params, query, deps }: Ctx<{ id: string }, PageQuery>) {
      const event = isId("event", params.id)
        ? await deps.prisma.event.findFirst({
            where: { id: params.id, accountId: account.id },
            select: { id: true, appId: true },
          })
        : null;
      if (!event) throw notFound("event", params.id);
      checkAppReach(account, event.appId, "event", params.id);
      await checkAppLive(deps.prisma, event.appId, "event", params.id);
      const cursor = await cursorOf(query, (id) => (isId("endpoint", id) ? id : null));
      const rows = await deps.prisma.delivery.findMany({
        where: { eventId: event.id, ...(cursor.id ? { endpointId: cursor.id } : {}) },
        orderBy: { endpointId: cursor.order },
        take: cursor.take,
      });
      const list = toList(rows, cursor, query.limit);
      return { body: { ...list, data: list.data.map(serializeDelivery) } };
    },
  },
];
