-- The delivery log (events, deliveries, attempts) partitioned by time, so that retention drops
-- whole partitions instead of deleting rows. Ids are time-sortable (`evt_` + ULID), so events are
-- ranged on `id` and their deliveries and attempts on `event_id`: the three tables share their
-- bounds, and an event's rows always sit in partitions of the same name. The dispatcher's
-- maintenance creates partitions ahead of time and drops expired ones (lifecycle/partitions.ts).
--
-- The tables already here become one partition of each ("_legacy", from MINVALUE to a bound past
-- every key they hold): attached in place, with their indexes reused where they still match,
-- never copied. A "_default" partition takes what falls outside every range.
--
-- A key in a partitioned table's unique index must include the partition key: deliveries and
-- attempts are unique on (id, event_id), attempts on (delivery_id, attempt_number, event_id).
-- The three tables hold no foreign keys: a partition referenced by another cannot be dropped
-- without scanning the referencing one, and a partition referencing apps or endpoints cannot be
-- made or dropped without locking them against every write. The lifecycle removes an event's
-- rows together, and an app's with it (lifecycle/purge.ts).

-- Partition bounds compare in the key column's collation. Ids are a fixed prefix then fixed-length
-- upper-case base32, which every ordinary collation sorts as bytes do; refuse one that does not.
DO $$
BEGIN
  IF (SELECT array_agg(k ORDER BY k) <> array_agg(k ORDER BY k COLLATE "C")
      FROM (VALUES ('evt_00000000000000000000000000'), ('evt_01JD3Z6Q4X6N3V8H2K9T5R7M1B'),
                   ('evt_0A000000000000000000000000'), ('evt_09ZZZZZZZZZZZZZZZZZZZZZZZZ'),
                   ('evt_1000000000000000000000000Z'), ('evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ'),
                   ('evt_Z0000000000000000000000000'), ('evt_A9000000000000000000000000')) v(k)) THEN
    RAISE EXCEPTION 'this database''s collation does not sort ids as bytes: the delivery log cannot be partitioned by id';
  END IF;
END $$;

ALTER TABLE "attempts" DROP CONSTRAINT "attempts_delivery_id_fkey";
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_event_id_fkey";
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_endpoint_id_fkey";
ALTER TABLE "events" DROP CONSTRAINT "events_app_id_fkey";

ALTER TABLE "events" RENAME TO "events_legacy";
ALTER INDEX "events_pkey" RENAME TO "events_legacy_pkey";
ALTER INDEX "events_account_id_app_id_id_idx" RENAME TO "events_legacy_account_id_app_id_id_idx";
ALTER INDEX "events_account_id_id_idx" RENAME TO "events_legacy_account_id_id_idx";

ALTER TABLE "deliveries" RENAME TO "deliveries_legacy";
ALTER TABLE "deliveries_legacy" DROP CONSTRAINT "deliveries_pkey";
ALTER TABLE "deliveries_legacy" ADD CONSTRAINT "deliveries_legacy_pkey" PRIMARY KEY ("id", "event_id");
ALTER INDEX "deliveries_endpoint_id_status_id_idx" RENAME TO "deliveries_legacy_endpoint_id_status_id_idx";
ALTER INDEX "deliveries_event_id_endpoint_id_key" RENAME TO "deliveries_legacy_event_id_endpoint_id_key";
ALTER INDEX "deliveries_replay_id_idx" RENAME TO "deliveries_legacy_replay_id_idx";

ALTER TABLE "attempts" RENAME TO "attempts_legacy";
ALTER TABLE "attempts_legacy" DROP CONSTRAINT "attempts_pkey";
ALTER TABLE "attempts_legacy" ADD CONSTRAINT "attempts_legacy_pkey" PRIMARY KEY ("id", "event_id");
DROP INDEX "attempts_delivery_id_attempt_number_key";
CREATE UNIQUE INDEX "attempts_legacy_delivery_id_attempt_number_event_id_key"
  ON "attempts_legacy"("delivery_id", "attempt_number", "event_id");
ALTER INDEX "attempts_account_id_id_idx" RENAME TO "attempts_legacy_account_id_id_idx";
ALTER INDEX "attempts_endpoint_id_id_idx" RENAME TO "attempts_legacy_endpoint_id_id_idx";
ALTER INDEX "attempts_event_id_id_idx" RENAME TO "attempts_legacy_event_id_id_idx";
ALTER INDEX "attempts_open_idx" RENAME TO "attempts_legacy_open_idx";
ALTER INDEX "attempts_replay_id_idx" RENAME TO "attempts_legacy_replay_id_idx";

CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "trace_context" TEXT,
    "data_erased_at" TIMESTAMPTZ(3),
    "fanned_out_at" TIMESTAMPTZ(3),
    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
) PARTITION BY RANGE ("id");
CREATE INDEX "events_account_id_app_id_id_idx" ON "events"("account_id", "app_id", "id");
CREATE INDEX "events_account_id_id_idx" ON "events"("account_id", "id");

CREATE TABLE "deliveries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "replay_id" TEXT,
    CONSTRAINT "deliveries_status_check"
      CHECK ("status" IN ('pending', 'succeeded', 'retrying', 'failed', 'dropped')),
    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id", "event_id")
) PARTITION BY RANGE ("event_id");
CREATE INDEX "deliveries_endpoint_id_status_id_idx" ON "deliveries"("endpoint_id", "status", "id");
CREATE UNIQUE INDEX "deliveries_event_id_endpoint_id_key" ON "deliveries"("event_id", "endpoint_id");
CREATE INDEX "deliveries_replay_id_idx" ON "deliveries"("replay_id") WHERE "replay_id" IS NOT NULL;
-- Whether a partition still holds a delivery on its schedule: retention drops it only when none.
CREATE INDEX "deliveries_open_idx" ON "deliveries"("event_id") WHERE "status" IN ('pending', 'retrying');

CREATE TABLE "attempts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "error" TEXT,
    "duration_ms" INTEGER,
    "trace_id" TEXT,
    "scheduled_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "replay_id" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "request_headers" JSONB,
    CONSTRAINT "attempts_status_check" CHECK ("status" IN ('pending', 'succeeded', 'failed')),
    CONSTRAINT "attempts_pkey" PRIMARY KEY ("id", "event_id")
) PARTITION BY RANGE ("event_id");
CREATE UNIQUE INDEX "attempts_delivery_id_attempt_number_event_id_key"
  ON "attempts"("delivery_id", "attempt_number", "event_id");
CREATE INDEX "attempts_account_id_id_idx" ON "attempts"("account_id", "id");
CREATE INDEX "attempts_endpoint_id_id_idx" ON "attempts"("endpoint_id", "id");
CREATE INDEX "attempts_event_id_id_idx" ON "attempts"("event_id", "id");
CREATE INDEX "attempts_open_idx" ON "attempts"("endpoint_id", "scheduled_at", "id") WHERE "status" = 'pending';
CREATE INDEX "attempts_replay_id_idx" ON "attempts"("replay_id");

-- The legacy partitions end past every key they hold, and no earlier than now.
DO $$
DECLARE
  alphabet CONSTANT text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  time_key text := '';
  bound text;
BEGIN
  FOR i IN 1..10 LOOP
    time_key := substr(alphabet, (ms % 32)::int + 1, 1) || time_key;
    ms := ms / 32;
  END LOOP;
  bound := GREATEST('evt_' || time_key || repeat('0', 16),
                    (SELECT max("id") || '0' FROM "events_legacy"),
                    (SELECT max("event_id") || '0' FROM "deliveries_legacy"),
                    (SELECT max("event_id") || '0' FROM "attempts_legacy"));
  EXECUTE format('ALTER TABLE "events" ATTACH PARTITION "events_legacy" FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  EXECUTE format('ALTER TABLE "deliveries" ATTACH PARTITION "deliveries_legacy" FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  EXECUTE format('ALTER TABLE "attempts" ATTACH PARTITION "attempts_legacy" FOR VALUES FROM (MINVALUE) TO (%L)', bound);
END $$;

CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;
CREATE TABLE "deliveries_default" PARTITION OF "deliveries" DEFAULT;
CREATE TABLE "attempts_default" PARTITION OF "attempts" DEFAULT;
