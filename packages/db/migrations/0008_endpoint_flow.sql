-- Per-endpoint delivery limits, chosen by the customer: a rate (deliveries per second) and an
-- override of ENDPOINT_MAX_IN_FLIGHT. NULL: no rate limit / the installation's default.
ALTER TABLE "endpoints" ADD COLUMN "rate_limit" INTEGER,
ADD COLUMN "max_in_flight" INTEGER;
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_rate_limit_check" CHECK ("rate_limit" BETWEEN 1 AND 10000);
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_max_in_flight_check" CHECK ("max_in_flight" BETWEEN 1 AND 1000);

-- What the dispatcher's release gate keeps per endpoint (lifecycle/release.ts): its attempts
-- in flight, its token bucket, its slow-down, its pause (circuit breaker or Retry-After), and
-- when it next has an attempt to release. Written often, a row at a time: room on each page
-- for HOT updates.
CREATE TABLE "endpoint_flows" (
    "endpoint_id" TEXT NOT NULL,
    "in_flight" INTEGER NOT NULL DEFAULT 0,
    "tokens" DOUBLE PRECISION,
    "tokens_at" TIMESTAMPTZ(3),
    "limit_now" INTEGER,
    "slow_until" TIMESTAMPTZ(3),
    "paused_until" TIMESTAMPTZ(3),
    "pause_reason" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "opens" INTEGER NOT NULL DEFAULT 0,
    "probe_attempt_id" TEXT,
    "held_by" TEXT,
    "next_release_at" TIMESTAMPTZ(3),

    CONSTRAINT "endpoint_flows_pkey" PRIMARY KEY ("endpoint_id")
) WITH (fillfactor = 50);

ALTER TABLE "endpoint_flows" ADD CONSTRAINT "endpoint_flows_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The release gate's poll: endpoints with an attempt to release, the longest waiting first.
CREATE INDEX "endpoint_flows_next_release_at_idx" ON "endpoint_flows"("next_release_at") WHERE "next_release_at" IS NOT NULL;

-- Each endpoint's open attempts in the order they are due: its queue (those not yet sent)
-- and what is in flight. Open attempts only, so it stays small, unlike the (status,
-- scheduled_at) index it replaces, which held every attempt. No index names `sent_at`: an
-- attempt marked sent stays a HOT update, its row rewritten in place, no index touched.
CREATE INDEX "attempts_open_idx" ON "attempts"("endpoint_id", "scheduled_at", "id") WHERE "status" = 'pending';
DROP INDEX "attempts_status_scheduled_at_idx";

-- Every endpoint has its flow; those with attempts waiting (a retry due, say) or in flight are
-- known to the gate from now on.
INSERT INTO "endpoint_flows" ("endpoint_id") SELECT "id" FROM "endpoints";
UPDATE "endpoint_flows" f SET "next_release_at" = w."due" FROM (
  SELECT "endpoint_id", min("scheduled_at") AS "due" FROM "attempts"
  WHERE "status" = 'pending' AND "sent_at" IS NULL GROUP BY "endpoint_id") w
WHERE f."endpoint_id" = w."endpoint_id";
UPDATE "endpoint_flows" f SET "in_flight" = s."n" FROM (
  SELECT "endpoint_id", count(*)::int AS "n" FROM "attempts"
  WHERE "status" = 'pending' AND "sent_at" IS NOT NULL GROUP BY "endpoint_id") s
WHERE f."endpoint_id" = s."endpoint_id";
