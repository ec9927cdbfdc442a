import { newId } from "../ids.ts";
import { prepared, type Queryable } from "../pool.ts";

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

const EVENTS = prepared(
  "fan-out-events",
  `SELECT ev.id, ev.account_id, ev.app_id, ev.type, ev.data_bytes FROM events ev JOIN apps ON apps.id = ev.app_id
   WHERE ev.id = ANY($1) AND apps.deleted_at IS NULL AND ev.data_erased_at IS NULL`,
);
const ENDPOINTS = prepared(
  "fan-out-endpoints",
  // Prisma keeps an empty list as NULL.
  `SELECT id, app_id, url, COALESCE(event_types, '{}') AS event_types, filter, ordering = 'fifo' AS fifo FROM endpoints
   WHERE app_id = ANY($1) AND deleted_at IS NULL AND NOT disabled`,
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
  const { rows: events } = await db.query<FanOutEvent>(EVENTS([eventIds]));
  if (!events.length) return { events, endpoints: [] };
  const { rows: endpoints } = await db.query<FanOutEndpoint>(
    ENDPOINTS([[...new Set(events.map((e) => e.app_id))]]),
  );
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
     known AS (
       SELECT id, event_id, endpoint_id FROM d
       UNION ALL
       SELECT id, event_id, endpoint_id FROM deliveries WHERE event_id = ANY($5::text[])),
     a AS (
       INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, created_at)
       SELECT x.attempt_id, x.account_id, x.app_id, known.id, x.event_id, x.endpoint_id, 1, 'pending', x.url, now(), now()
       FROM x JOIN known ON known.event_id = x.event_id AND known.endpoint_id = x.endpoint_id
       ON CONFLICT (delivery_id, attempt_number, event_id) DO NOTHING)
     SELECT (SELECT count(*)::int FROM d) AS created,
       (SELECT COALESCE(json_agg(json_build_object('event_id', d.event_id, 'endpoint_id', d.endpoint_id,
                                                   'sent_after', fl.fifo_after)), '[]')
        FROM d JOIN endpoint_flows fl ON fl.endpoint_id = d.endpoint_id AND fl.fifo_after > d.event_id
        WHERE d.endpoint_id = ANY($8::text[])) AS out_of_order`,
);

/** A new delivery to a fifo endpoint that was already sent a later event (`sent_after`). */
export type OutOfOrder = { event_id: string; endpoint_id: string; sent_after: string };

/**
 * One `pending` delivery per (event, endpoint), each with a pending first attempt; returns
 * how many deliveries are new, and those of them to a fifo endpoint that come too late to keep
 * its order: their event's fan-out took longer than the gate waits for it (ordering.ts). One statement, atomic, for the whole batch: new deliveries come
 * from the CTE, those a redelivered message finds already there from the table (a CTE's
 * inserts are not visible to its own statement).
 *
 * Idempotent by the unique keys delivery (event_id, endpoint_id) and attempt (delivery_id,
 * attempt_number, event_id): a message handled twice creates nothing twice.
 */
export async function createDeliveries(
  db: Queryable,
  targets: { event: FanOutEvent; endpoint: FanOutEndpoint }[],
): Promise<{ created: number; outOfOrder: OutOfOrder[] }> {
  // One lock order for every writer: concurrent batches cannot deadlock on the unique index.
  const sorted = [...targets].sort((a, b) =>
    a.event.id + a.endpoint.id < b.event.id + b.endpoint.id ? -1 : 1,
  );
  const { rows } = await db.query<{ created: number; out_of_order: OutOfOrder[] }>(
    CREATE_DELIVERIES([
      sorted.map(() => newId("delivery")),
      sorted.map(() => newId("attempt")),
      sorted.map((t) => t.event.account_id),
      sorted.map((t) => t.event.app_id),
      sorted.map((t) => t.event.id),
      sorted.map((t) => t.endpoint.id),
      sorted.map((t) => t.endpoint.url),
      [...new Set(sorted.filter((t) => t.endpoint.fifo).map((t) => t.endpoint.id))],
    ]),
  );
  return { created: rows[0]?.created ?? 0, outOfOrder: rows[0]?.out_of_order ?? [] };
}
