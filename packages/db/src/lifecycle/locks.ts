import type { DeliveryStatus } from "@herald/contracts/statuses";
import type { PoolClient } from "../pool.ts";
import { type Flow, freshFlow } from "./flow.ts";

/**
 * The one locking rule of the lifecycle: a transaction that changes deliveries (a result, a
 * due retry, a drop, a replay, an app's deletion) first locks their rows, in id order, and
 * only then touches their attempts or their endpoints (again in id order). Every writer
 * taking locks in the same order cannot deadlock with another, and a result and a drop of the
 * same delivery apply one after the other, each seeing what the other did.
 *
 * `FOR NO KEY UPDATE`, not `FOR UPDATE`: no key changes, so a row being inserted that refers
 * to one of these (an attempt of a locked delivery, a delivery of a locked endpoint: its
 * foreign key takes `FOR KEY SHARE`) does not wait on it. A failing endpoint's results
 * never hold up another tenant's fan-out.
 */
export type LockedDelivery = {
  id: string;
  status: DeliveryStatus;
  endpoint_id: string;
  event_created_at: Date;
};

export async function lockDeliveries(
  tx: PoolClient,
  ids: string[],
  /** Their events, when known: only those events' partitions are looked in. */
  eventIds?: string[],
): Promise<Map<string, LockedDelivery>> {
  const { rows } = await tx.query<LockedDelivery>(
    eventIds
      ? `SELECT d.id, d.status, d.endpoint_id, ev.created_at AS event_created_at
         FROM deliveries d JOIN events ev ON ev.id = d.event_id
         WHERE d.id = ANY($1) AND d.event_id = ANY($2) AND ev.id = ANY($2) ORDER BY d.id FOR NO KEY UPDATE OF d`
      : `SELECT d.id, d.status, d.endpoint_id, ev.created_at AS event_created_at
         FROM deliveries d JOIN events ev ON ev.id = d.event_id
         WHERE d.id = ANY($1) ORDER BY d.id FOR NO KEY UPDATE OF d`,
    eventIds ? [ids, eventIds] : [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** An endpoint as the lifecycle reads it to decide what follows an attempt. */
export type EndpointState = {
  id: string;
  url: string;
  max_in_flight: number | null;
  failing_since: Date | null;
  disabled: boolean;
  deleted: boolean;
};

/**
 * Reads these endpoints, locking (in id order) those whose state the caller may change: the
 * ones in `changing`, and those whose failure clock runs (a success stops it). Returns the
 * ones locked; a healthy endpoint's successes lock nothing here.
 */
export async function lockEndpoints(
  tx: PoolClient,
  ids: string[],
  changing: string[],
): Promise<Map<string, EndpointState>> {
  const { rows } = await tx.query<EndpointState>(
    `SELECT id, url, max_in_flight, failing_since, disabled, deleted_at IS NOT NULL AS deleted FROM endpoints
     WHERE id = ANY($1) AND (id = ANY($2) OR failing_since IS NOT NULL) ORDER BY id FOR NO KEY UPDATE`,
    [ids, changing],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The endpoints' flows (flow.ts), locked in id order, last of all: after the deliveries, their
 * attempts and their endpoints. An endpoint without one yet gets a fresh one, written with the
 * rest (`INSERT … ON CONFLICT`).
 */
export async function lockFlows(tx: PoolClient, endpointIds: string[]): Promise<Map<string, Flow>> {
  const { rows } = await tx.query<Flow>(
    `SELECT endpoint_id, in_flight, tokens, tokens_at, limit_now, slow_until, paused_until, pause_reason, failures, opens,
            probe_attempt_id, held_by, next_release_at
     FROM endpoint_flows WHERE endpoint_id = ANY($1) ORDER BY endpoint_id FOR NO KEY UPDATE`,
    [endpointIds],
  );
  const flows = new Map(rows.map((r) => [r.endpoint_id, r]));
  for (const id of endpointIds) if (!flows.has(id)) flows.set(id, freshFlow(id));
  return flows;
}
