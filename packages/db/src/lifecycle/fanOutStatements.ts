import { newId } from "../ids.ts";
import { prepared, type Queryable } from "../pool.ts";
import { type AttemptToSend, SEND_COLUMNS } from "./send.ts";

/*
 * The fan-out's statements: the events to fan out and their endpoints, their payloads, and the
 * deliveries with their first attempts. The stage that runs them, and decides which endpoint
 * receives which event, is the dispatcher's fanOut.ts.
 */

/**
 * An event to fan out. `reads_data`: an endpoint that takes it by type filters on `data`, which
 * must be read (`eventPayloads`) to match; `data_bytes`, the data's size as accepted (null:
 * unknown, from before sizes were kept).
 */
export type FanOutEvent = {
  id: string;
  account_id: string;
  app_id: string;
  type: string;
  data_bytes: number | null;
  reads_data?: boolean;
  data?: unknown;
};
export type FanOutEndpoint = {
  id: string;
  app_id: string;
  url: string;
  event_types: string[];
  /** A MongoDB-style query (@herald/contracts/filter), or null. */
  filter: unknown;
  /** `ordering` is fifo. */
  fifo: boolean;
};

/**
 * The events and their apps' endpoints in one round trip: the endpoints as JSON beside the
 * events' rows (Prisma keeps an empty list of event types as NULL).
 */
const EVENTS_AND_ENDPOINTS = prepared(
  "fan-out-events-endpoints",
  `WITH ev AS MATERIALIZED (
       SELECT ev.id, ev.account_id, ev.app_id, ev.type, ev.data_bytes FROM events ev JOIN apps ON apps.id = ev.app_id
       WHERE ev.id = ANY($1) AND apps.deleted_at IS NULL AND ev.data_erased_at IS NULL)
   SELECT ev.*, CASE WHEN row_number() OVER () = 1 THEN (
       SELECT COALESCE(json_agg(json_build_object('id', id, 'app_id', app_id, 'url', url,
                                                  'event_types', COALESCE(event_types, '{}'), 'filter', filter,
                                                  'fifo', ordering = 'fifo')), '[]')
       FROM endpoints WHERE app_id IN (SELECT app_id FROM ev) AND deleted_at IS NULL AND NOT disabled) END AS endpoints
   FROM ev`,
);
const PAYLOADS = prepared("fan-out-payloads", "SELECT id, data FROM events WHERE id = ANY($1)");

/**
 * The events of these ids that still have an app, and the endpoints their apps have that may
 * receive them: neither deleted nor disabled. An event an endpoint takes by type and that
 * filters on `data` is marked `reads_data`: its payload is read apart, a few at a time
 * (`eventPayloads`), the rest fan out on what the event row holds. Which endpoint receives
 * which event is the dispatcher's policy (its `fanOut` stage).
 */
export async function eventsToFanOut(
  db: Queryable,
  eventIds: string[],
): Promise<{ events: FanOutEvent[]; endpoints: FanOutEndpoint[] }> {
  const { rows } = await db.query<FanOutEvent & { endpoints?: FanOutEndpoint[] | null }>(
    EVENTS_AND_ENDPOINTS([eventIds]),
  );
  const endpoints = rows[0]?.endpoints ?? [];
  const events: FanOutEvent[] = rows.map(({ endpoints: _e, ...ev }) => ev);
  const readers = endpoints.filter((e) => e.filter !== null && JSON.stringify(e.filter).includes('"data'));
  for (const ev of events)
    ev.reads_data = readers.some(
      (e) => e.app_id === ev.app_id && (e.event_types.length === 0 || e.event_types.includes(ev.type)),
    );
  return { events, endpoints };
}

/** These events' data, parsed, by id; an event gone meanwhile is absent. */
export async function eventPayloads(db: Queryable, eventIds: string[]): Promise<Map<string, unknown>> {
  const { rows } = await db.query<{ id: string; data: unknown }>(PAYLOADS([eventIds]));
  return new Map(rows.map((r) => [r.id, r.data]));
}

/**
 * Events fan-out found no endpoint for: marked, so retention knows they are done with (an event
 * with deliveries shows it by them). Rare: an app with no endpoint for a type.
 */
export async function markFannedOut(db: Queryable, eventIds: string[]): Promise<void> {
  await db.query("UPDATE events SET fanned_out_at = now() WHERE id = ANY($1) AND fanned_out_at IS NULL", [
    eventIds,
  ]);
}

const CREATE_DELIVERIES = prepared(
  "create-deliveries",
  `WITH x AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         AS x(delivery_id, attempt_id, account_id, app_id, event_id, endpoint_id, url)),
     d AS (
       INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts, created_at, updated_at)
       SELECT delivery_id, x.account_id, x.app_id, event_id, endpoint_id, 'pending', 0, now(), now() FROM x
       -- An event erased since it was read, or expired (its partition dropped): nothing for it.
       WHERE EXISTS (SELECT 1 FROM events ev WHERE ev.id = x.event_id AND ev.data_erased_at IS NULL)
       ON CONFLICT (event_id, endpoint_id) DO NOTHING
       RETURNING id, event_id, endpoint_id),
     fresh AS (SELECT endpoint_id, count(*)::int AS n FROM d GROUP BY endpoint_id),
     -- The fast path: the flows of endpoints that only an in-flight limit holds back, with nothing
     -- waiting (held_by null) and room for all their new attempts, locked in id order. Having
     -- waited for a lock, the conditions are checked again on the row as it is now.
     room AS MATERIALIZED (
       SELECT f.endpoint_id, fresh.n FROM endpoint_flows f JOIN fresh ON fresh.endpoint_id = f.endpoint_id
         JOIN endpoints ep ON ep.id = f.endpoint_id
       WHERE f.endpoint_id = ANY($6::text[]) AND ep.rate_limit IS NULL AND ep.ordering = 'none'
         AND ep.deleted_at IS NULL AND NOT ep.disabled AND f.held_by IS NULL
         AND f.pause_reason IS NULL AND f.paused_until IS NULL
         AND (f.slow_until IS NULL OR f.slow_until <= clock_timestamp())
         AND f.in_flight + fresh.n <= LEAST(ep.max_in_flight, $9::int)
       ORDER BY f.endpoint_id FOR NO KEY UPDATE OF f),
     taken AS (
       UPDATE endpoint_flows f SET in_flight = f.in_flight + room.n FROM room WHERE f.endpoint_id = room.endpoint_id
       RETURNING f.endpoint_id),
     known AS (
       SELECT id, event_id, endpoint_id, true AS new FROM d
       UNION ALL
       SELECT id, event_id, endpoint_id, false FROM deliveries WHERE event_id = ANY($5::text[])),
     a AS (
       INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url,
                             scheduled_at, created_at, sent_at)
       SELECT x.attempt_id, x.account_id, x.app_id, known.id, x.event_id, x.endpoint_id, 1, 'pending', x.url, now(), now(),
              CASE WHEN known.new AND x.endpoint_id IN (SELECT endpoint_id FROM taken) THEN clock_timestamp() END
       FROM x JOIN known ON known.event_id = x.event_id AND known.endpoint_id = x.endpoint_id
       ON CONFLICT (delivery_id, attempt_number, event_id) DO NOTHING
       RETURNING id, delivery_id, event_id, endpoint_id, app_id, attempt_number, replay_id, sent_at),
     meta AS (
       SELECT (SELECT COALESCE(json_object_agg(endpoint_id, n), '{}') FROM fresh) AS fresh,
         (SELECT COALESCE(array_agg(endpoint_id), '{}') FROM taken) AS fast,
         (SELECT COALESCE(json_agg(json_build_object('event_id', d.event_id, 'endpoint_id', d.endpoint_id,
                                                     'sent_after', fl.fifo_after)), '[]')
          FROM d JOIN endpoint_flows fl ON fl.endpoint_id = d.endpoint_id AND fl.fifo_after > d.event_id
          WHERE d.endpoint_id = ANY($8::text[])) AS out_of_order)
     SELECT meta.*, s.* FROM meta LEFT JOIN (
       SELECT ${SEND_COLUMNS} FROM a JOIN endpoints ep ON ep.id = a.endpoint_id
         JOIN events ev ON ev.id = a.event_id AND ev.id = ANY($5::text[])
       WHERE a.sent_at IS NOT NULL) s ON true
     ORDER BY s.event_id, s.endpoint_id`,
);

/** A new delivery to a fifo endpoint that was already sent a later event (`sent_after`). */
export type OutOfOrder = { event_id: string; endpoint_id: string; sent_after: string };

export type CreatedDeliveries = {
  /** Deliveries new in this call. */
  created: number;
  outOfOrder: OutOfOrder[];
  /** First attempts released on the fast path, already counted in flight: to publish. */
  send: AttemptToSend[];
  /** Endpoints whose attempts wait for the release gate (release.ts): all but the fast path's. */
  gate: string[];
};

/**
 * One `pending` delivery per (event, endpoint), each with a pending first attempt, and, for
 * endpoints with room, that attempt released: one statement, atomic, for the whole batch.
 *
 * The fast path: an endpoint that only its in-flight limit can hold back (no rate limit, no
 * order to keep, no pause or slow-down, neither deleted nor disabled), with nothing waiting
 * in its queue and room for every new attempt, has them created already sent and counted in
 * flight. No queue is read and no second commit is made between the event and its attempts'
 * publish: what the release gate would decide, decided by the same statement. Every other
 * endpoint (and one a redelivered message finds with deliveries already made) is left to the
 * gate (`gate`), which reads its queue as before. New deliveries come from the CTE, those a
 * redelivered message finds already there from the table (a CTE's inserts are not visible to
 * its own statement).
 *
 * Locks: the new rows, then the flows in id order (locks.ts: flows last), held until the
 * commit. Also returns those new deliveries to a fifo endpoint that come too late to keep its
 * order: their event's fan-out took longer than the gate waits for it (ordering.ts).
 *
 * Idempotent by the unique keys delivery (event_id, endpoint_id) and attempt (delivery_id,
 * attempt_number, event_id): a message handled twice creates nothing twice, and only new
 * attempts take the fast path.
 */
export async function createDeliveries(
  db: Queryable,
  targets: { event: FanOutEvent; endpoint: FanOutEndpoint }[],
  maxInFlight: number,
): Promise<CreatedDeliveries> {
  // One lock order for every writer: concurrent batches cannot deadlock on the unique index.
  const sorted = [...targets].sort((a, b) =>
    a.event.id + a.endpoint.id < b.event.id + b.endpoint.id ? -1 : 1,
  );
  const { rows } = await db.query<
    Partial<AttemptToSend> & { fresh: Record<string, number>; fast: string[]; out_of_order: OutOfOrder[] }
  >(
    CREATE_DELIVERIES([
      sorted.map(() => newId("delivery")),
      sorted.map(() => newId("attempt")),
      sorted.map((t) => t.event.account_id),
      sorted.map((t) => t.event.app_id),
      sorted.map((t) => t.event.id),
      sorted.map((t) => t.endpoint.id),
      sorted.map((t) => t.endpoint.url),
      [...new Set(sorted.filter((t) => t.endpoint.fifo).map((t) => t.endpoint.id))],
      maxInFlight,
    ]),
  );
  const meta = rows[0]!;
  const fast = new Set(meta.fast);
  const wanted = new Map<string, number>();
  for (const t of sorted) wanted.set(t.endpoint.id, (wanted.get(t.endpoint.id) ?? 0) + 1);
  // Not on the fast path, or a redelivery that found deliveries made: the gate looks.
  const gate = [...wanted].filter(([id, n]) => !fast.has(id) || (meta.fresh[id] ?? 0) < n).map(([id]) => id);
  const send = rows
    .filter((r) => r.id)
    .map(({ fresh: _f, fast: _fast, out_of_order: _o, ...a }) => a as AttemptToSend);
  return {
    created: Object.values(meta.fresh).reduce((s, n) => s + n, 0),
    outOfOrder: meta.out_of_order,
    send,
    gate,
  };
}
