import type { Prisma } from "@herald/db";
import { type Notice, OPERATIONAL_TYPES, type OperationalType, stageNotices } from "@herald/db/lifecycle";
import type { OutboxRow } from "@herald/db/outbox";
import { invalid } from "../../http/errors.ts";
import { inPrisma } from "../../outboxRelay.ts";

/**
 * The gateway's part of operational webhooks (the lifecycle's operational.ts tells the rest):
 * an endpoint disabled by hand, one enabled again (or a paused one given a new URL), and a
 * replay that had nothing to queue, told in the transaction of the change; and the event type
 * names an operational endpoint may subscribe to.
 */
export function checkOperationalTypes(names: string[], param = "event_types"): string[] {
  const known = new Set<string>(OPERATIONAL_TYPES);
  const index = names.findIndex((n) => !known.has(n));
  if (index >= 0)
    throw invalid(
      `${param}[${index}]`,
      `No operational event type named '${names[index]}'; they are ${OPERATIONAL_TYPES.join(", ")}.`,
    );
  return [...new Set(names)];
}

export const disabledByHand = (endpointId: string, at: Date): Notice => ({
  type: "endpoint.disabled" satisfies OperationalType,
  endpointId,
  data: { trigger: "manual", reason: "Disabled through the API.", disabled_at: at.toISOString() },
});

/** What ended a pause or a disable through the API (or the portal): `reason` in words. */
const RECOVERED_BY_HAND = {
  enabled: "Enabled through the API.",
  new_url: "Given a new URL through the API, which ended its pause.",
} as const;

/** An endpoint sent to again by a change through the API: enabled, or a paused one given a new URL. */
export const recoveredByHand = (
  endpointId: string,
  at: Date,
  why: keyof typeof RECOVERED_BY_HAND,
): Notice => ({
  type: "endpoint.recovered" satisfies OperationalType,
  endpointId,
  data: { trigger: "manual", reason: RECOVERED_BY_HAND[why], recovered_at: at.toISOString() },
});

export const replayCompleted = (r: {
  id: string;
  endpointId: string;
  queued: number;
  createdAt: Date;
}): Notice => ({
  type: "replay.completed" satisfies OperationalType,
  endpointId: r.endpointId,
  data: { replay: r.id, queued: r.queued, completed_at: r.createdAt.toISOString() },
});

/** Writes notices in a Prisma transaction; returns their outbox rows, to publish after the commit. */
export async function stageInPrisma(tx: Prisma.TransactionClient, notices: Notice[]): Promise<OutboxRow[]> {
  const staged = await stageNotices(inPrisma(tx), notices);
  return staged.map((m) => ({
    id: BigInt(m.id),
    name: m.name,
    messageId: m.messageId,
    payload: m.payload,
    headers: {},
  }));
}
