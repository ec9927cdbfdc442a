import { newId } from "../ids.ts";
import { insertOutboxRows, type StagedMessage, type Statements } from "../outbox/index.ts";
import type { Queryable } from "../pool.ts";
import type { FlowChange } from "./flow.ts";

/**
 * Operational webhooks: what happens to an account's endpoints, told to the endpoints the
 * account registered for it, in its operational app (one an account at most, `apps.operational`).
 * Each is an ordinary event of that app, so it is delivered, signed, retried and logged like any
 * other; it is written in the transaction of the change it tells of, with its `event.created.v1`
 * in the outbox (packages/db/src/outbox), so a change committed is never left untold. The caller
 * publishes what was staged after its commit (the dispatcher's publishStaged.ts, the gateway's
 * OutboxRelay), and the outbox's relay whatever that missed.
 *
 * Nothing is told about the operational app's own endpoints, so a notice's delivery failing
 * never makes another notice (no loops), and nothing is stored for an account with no endpoint
 * that would receive it.
 */
export const OPERATIONAL_TYPES = [
  "endpoint.disabled",
  "endpoint.paused",
  "endpoint.recovered",
  "delivery.exhausted",
  "replay.completed",
] as const;

export type OperationalType = (typeof OPERATIONAL_TYPES)[number];

/**
 * One change to tell of, about one endpoint. `data` is the event's own fields; every event also
 * carries `endpoint`, `app`, `app_uid` and `url`, filled in here from the endpoint.
 */
export type Notice = {
  type: OperationalType;
  endpointId: string;
  data: Record<string, unknown>;
  /** With `delivery.exhausted`: its event, whose type is filled in as `event_type`. */
  eventId?: string;
};

/**
 * Writes each notice as an event of its account's operational app, with its outbox row, in the
 * caller's transaction (a pg client, or an adapter of a Prisma transaction): only where the app
 * has an enabled endpoint that receives its type, and never about the operational app's own
 * endpoints. Returns the outbox rows written.
 */
export async function stageNotices(db: Queryable | Statements, notices: Notice[]): Promise<StagedMessage[]> {
  if (!notices.length) return [];
  const now = new Date();
  type Row = { id: string | bigint; message_id: string; payload: StagedMessage["payload"] };
  const { rows } = await (db as Statements).query(
    `WITH n AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
         AS n(event_id, message_id, endpoint_id, type, data, about_event)),
     src AS MATERIALIZED (
       SELECT n.event_id, n.message_id, n.type, e.account_id, op.id AS op_app,
              jsonb_build_object('endpoint', e.id, 'app', e.app_id, 'app_uid', a.uid, 'url', e.url)
                || CASE WHEN n.about_event IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(
                     'event', n.about_event,
                     'event_type', (SELECT ev.type FROM events ev WHERE ev.id = n.about_event LIMIT 1)) END
                || n.data::jsonb AS data,
              jsonb_build_object('event_id', n.event_id, 'account_id', e.account_id, 'app_id', op.id,
                                 'type', n.type, 'created_at', $8::text) AS payload
       FROM n
       JOIN endpoints e ON e.id = n.endpoint_id
       JOIN apps a ON a.id = e.app_id AND NOT a.operational
       JOIN apps op ON op.account_id = e.account_id AND op.operational AND op.deleted_at IS NULL
       WHERE EXISTS (
         SELECT 1 FROM endpoints oe
         WHERE oe.account_id = op.account_id AND oe.app_id = op.id AND oe.deleted_at IS NULL AND NOT oe.disabled
           AND (COALESCE(cardinality(oe.event_types), 0) = 0 OR n.type = ANY(oe.event_types)))),
     ev AS (
       INSERT INTO events (id, account_id, app_id, type, data, data_bytes, created_at)
       SELECT event_id, account_id, op_app, type, data, octet_length(data::text), $7::timestamptz FROM src
       RETURNING id),
     o AS (
       ${insertOutboxRows(`(SELECT 'event.created.v1' AS name, src.message_id, src.payload, '{}'::jsonb AS headers,
                                    $7::timestamptz AS created_at
                             FROM src JOIN ev ON ev.id = src.event_id) AS m`)})
     SELECT o.id, o.message_id, src.payload FROM o JOIN src ON src.message_id = o.message_id`,
    [
      notices.map(() => newId("event")),
      notices.map(() => newId("message")),
      notices.map((n) => n.endpointId),
      notices.map((n) => n.type),
      notices.map((n) => JSON.stringify(n.data)),
      notices.map((n) => n.eventId ?? null),
      now,
      now.toISOString(),
    ],
  );
  return (rows as Row[]).map((r) => ({
    id: String(r.id),
    name: "event.created.v1",
    messageId: r.message_id,
    payload: r.payload,
  }));
}

/**
 * `endpoint.paused` when the breaker opens (not again after a failed probe), `endpoint.recovered`
 * when it closes (`trigger: automatic`; the gateway tells of one ended by hand, `manual`).
 */
export function flowNotice(change: FlowChange, at: Date): Notice | null {
  if (change.change === "paused" && change.reason === "not_responding" && !change.again)
    return {
      type: "endpoint.paused",
      endpointId: change.endpointId,
      data: {
        reason: "not_responding",
        paused_at: at.toISOString(),
        next_probe_at: change.until?.toISOString() ?? null,
      },
    };
  if (change.change === "resumed")
    return {
      type: "endpoint.recovered",
      endpointId: change.endpointId,
      data: { trigger: "automatic", reason: "It answered again.", recovered_at: at.toISOString() },
    };
  return null;
}
