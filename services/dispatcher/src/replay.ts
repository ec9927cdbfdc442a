import type { ReplayRequestedV1 } from "@herald/contracts";
import { newId } from "@herald/db";
import type { DispatcherDeps } from "./deps.ts";
import { sendAttempts } from "./dispatch.ts";

const BATCH = 100;

/**
 * `replay.requested.v1`: the endpoint's `failed` deliveries that match (by when they failed:
 * their last attempt, else when they took the status) go back to `pending`,
 * oldest event first, each with a new attempt tagged with the replay, in batches of 100.
 *
 * Durable and idempotent: each batch commits before it is sent; a restart redelivers the
 * message, which sends what the last run committed but never handed over, then carries on
 * with the deliveries still `failed`. The conditional `status = 'failed'` keeps a delivery
 * from being replayed twice.
 */
export async function runReplay(deps: DispatcherDeps, message: ReplayRequestedV1): Promise<void> {
  const { prisma } = deps;
  const replay = await prisma.replay.findUnique({ where: { id: message.replay_id } });
  if (!replay || replay.status === "completed") return;
  await prisma.replay.updateMany({ where: { id: replay.id, status: "queued" }, data: { status: "running" } });

  const stranded = await prisma.attempt.findMany({
    where: { replayId: replay.id, status: "pending", sentAt: null },
    select: { id: true },
  });
  await sendAttempts(
    deps,
    stranded.map((a) => a.id),
  );

  const since = message.since ? new Date(message.since) : null;
  const cutoff = new Date(message.cutoff);
  for (;;) {
    const created = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        { id: string; account_id: string; app_id: string; event_id: string; next_number: number }[]
      >`
        SELECT d.id, d.account_id, d.app_id, d.event_id,
               (SELECT COALESCE(MAX(a.attempt_number), 0) + 1 FROM attempts a WHERE a.delivery_id = d.id)::int AS next_number
        FROM deliveries d
        WHERE d.endpoint_id = ${message.endpoint_id} AND d.status = 'failed'
          AND COALESCE(d.last_attempt_at, d.updated_at) <= ${cutoff}
          AND (${since}::timestamptz IS NULL OR COALESCE(d.last_attempt_at, d.updated_at) >= ${since}::timestamptz)
          AND (${message.event_id}::text IS NULL OR d.event_id = ${message.event_id}::text)
        ORDER BY d.event_id, d.id
        LIMIT ${BATCH}
        FOR UPDATE OF d SKIP LOCKED`;
      if (!rows.length) return [];
      const endpoint = await tx.endpoint.findUniqueOrThrow({
        where: { id: message.endpoint_id },
        select: { url: true },
      });
      const now = new Date();
      await tx.delivery.updateMany({
        where: { id: { in: rows.map((r) => r.id) }, status: "failed" },
        data: { status: "pending", nextAttemptAt: null, updatedAt: now },
      });
      const attempts = rows.map((r) => ({
        id: newId("attempt"),
        accountId: r.account_id,
        appId: r.app_id,
        deliveryId: r.id,
        eventId: r.event_id,
        endpointId: message.endpoint_id,
        attemptNumber: r.next_number,
        status: "pending",
        url: endpoint.url,
        scheduledAt: now,
        replayId: replay.id,
      }));
      await tx.attempt.createMany({ data: attempts });
      return attempts.map((a) => a.id);
    });
    deps.metrics.deliveries.inc({ status: "pending" }, created.length);
    await sendAttempts(deps, created);
    if (created.length < BATCH) break;
  }
  await prisma.replay.update({
    where: { id: replay.id },
    data: { status: "completed", completedAt: new Date() },
  });
}
