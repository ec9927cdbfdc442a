import type { EventCreatedV1 } from "@herald/contracts";
import { newId } from "@herald/db";
import { annotate } from "@herald/runtime";
import type { DispatcherDeps } from "./deps.ts";
import { sendAttempts } from "./dispatch.ts";
import { receives } from "./retries.ts";

/**
 * `event.created.v1`: one delivery per endpoint of the event's app that is neither deleted nor
 * disabled and receives the event's type, each with a pending first attempt, handed to the
 * senders.
 *
 * Idempotent by the unique keys delivery (event_id, endpoint_id) and attempt (delivery_id,
 * attempt_number): a redelivered message (the outbox relay published it twice, or a
 * dispatcher died mid-way) creates nothing twice, and only first attempts not yet handed to
 * a sender (`sent_at` null) are sent.
 */
export async function fanOut(deps: DispatcherDeps, message: EventCreatedV1): Promise<void> {
  const { prisma } = deps;
  annotate({ "herald.event_id": message.event_id, "herald.app_id": message.app_id });
  const event = await prisma.event.findUnique({
    where: { id: message.event_id },
    select: { id: true, accountId: true, appId: true, type: true },
  });
  // Its app was deleted since: nothing is left to deliver to.
  if (!event) return;
  const endpoints = await prisma.endpoint.findMany({
    where: { appId: event.appId, deletedAt: null, disabled: false },
    select: { id: true, url: true, eventTypes: true },
  });
  const targets = endpoints.filter((e) => receives(e.eventTypes, event.type));
  if (!targets.length) return;
  const now = new Date();
  const created = await prisma.$transaction(async (tx) => {
    const inserted = await tx.delivery.createMany({
      data: targets.map((e) => ({
        id: newId("delivery"),
        accountId: event.accountId,
        appId: event.appId,
        eventId: event.id,
        endpointId: e.id,
        status: "pending",
        createdAt: now,
        updatedAt: now,
      })),
      skipDuplicates: true,
    });
    const rows = await tx.delivery.findMany({
      where: { eventId: event.id },
      select: { id: true, endpointId: true },
    });
    const urls = new Map(targets.map((e) => [e.id, e.url]));
    await tx.attempt.createMany({
      data: rows
        .filter((d) => urls.has(d.endpointId))
        .map((d) => ({
          id: newId("attempt"),
          accountId: event.accountId,
          appId: event.appId,
          deliveryId: d.id,
          eventId: event.id,
          endpointId: d.endpointId,
          attemptNumber: 1,
          status: "pending",
          url: urls.get(d.endpointId)!,
          scheduledAt: now,
          createdAt: now,
        })),
      skipDuplicates: true,
    });
    return inserted.count;
  });
  if (created) {
    deps.metrics.deliveries.inc({ status: "pending" }, created);
    deps.logger.info({ event: event.id, app: event.appId, endpoints: created }, "event fanned out");
  }
  const unsent = await prisma.attempt.findMany({
    where: { eventId: event.id, attemptNumber: 1, status: "pending", sentAt: null },
    select: { id: true },
  });
  await sendAttempts(
    deps,
    unsent.map((a) => a.id),
  );
}
