import { isId } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { notFound } from "../../http/errors.ts";
import { type RouteSpec, ref } from "../../http/route.ts";
import { checkAppLive, checkAppReach } from "../common.ts";
import { serializeEvent } from "./crud.ts";
import { deliveriesOf } from "./deliveries.ts";

/**
 * Erasing an event's payload, the data protection request every product backend gets: `data`
 * becomes `{}` for good and `data_erased_at` says when; the event's type, times, deliveries and
 * attempts stay. In the same transaction an `event.erased.v1` goes to the outbox, on which the
 * dispatcher drops the event's pending and retrying deliveries. The bodies transformations
 * made of it, kept on its attempts, are blanked with it.
 */
export const eventErasureRoutes: RouteSpec[] = [
  {
    method: "delete",
    path: "/v3/events/{id}/data",
    auth: "account",
    scope: "events:write",
    oneApp: true,
    audit: "event.erased",
    tag: "Events",
    summary: "Erase an event's payload",
    description:
      "Blanks the payload for good: `data` becomes `{}` and `data_erased_at` the time of the first erasure (erasing again changes nothing). The event, its deliveries and its attempts stay readable; an attempt's `request.body` is `null` from then on. Its `pending` and `retrying` deliveries become `dropped` within moments; an attempt already in flight is made, and its result recorded. The event is never delivered or replayed again.",
    params: { id: "The event's id." },
    response: { status: 200, schema: ref("Event"), description: "The event, its payload erased." },
    async handler({ account, params, deps, audit }: Ctx<{ id: string }>) {
      const found = isId("event", params.id)
        ? await deps.prisma.event.findFirst({
            where: { id: params.id, accountId: account.id },
            select: { id: true, appId: true },
          })
        : null;
      if (!found) throw notFound("event", params.id);
      checkAppReach(account, found.appId, "event", params.id);
      await checkAppLive(deps.prisma, found.appId, "event", params.id);
      const { event, staged } = await deps.prisma.$transaction(async (tx) => {
        const erasedAt = new Date();
        const changed = await tx.event.updateMany({
          where: { id: found.id, dataErasedAt: null },
          data: { data: {}, dataBytes: 2, dataErasedAt: erasedAt },
        });
        // A transformation's request bodies, kept on the attempts, are the payload too.
        await tx.$executeRaw`UPDATE attempts SET request_body = NULL WHERE event_id = ${found.id} AND request_body IS NOT NULL`;
        // Gone meanwhile (its app purged, its retention run out): as if it never was.
        const event = await tx.event.findUnique({ where: { id: found.id } });
        if (!event) throw notFound("event", found.id);
        await audit(tx, { type: "event", id: found.id });
        // Only the first erasure announces it: the dispatcher has nothing more to do after that.
        const staged = changed.count
          ? await deps.outbox.stage(tx, "event.erased.v1", {
              event_id: found.id,
              account_id: account.id,
              erased_at: erasedAt.toISOString(),
            })
          : null;
        return { event, staged };
      });
      if (staged) deps.outbox.publishAfterCommit([staged]);
      const deliveries = await deliveriesOf(deps.prisma, [event.id]);
      return { body: serializeEvent(event, deliveries.get(event.id)) };
    },
  },
];
