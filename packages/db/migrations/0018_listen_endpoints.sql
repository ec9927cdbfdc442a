-- A `herald listen` endpoint lives while its CLI's socket is open: the gateway holding the
-- socket keeps `listen_until` a minute ahead, and deletes the endpoint when the socket closes.
-- Should that gateway die first, the dispatcher deletes endpoints whose lease ran out.
ALTER TABLE "endpoints" ADD COLUMN "listen_until" TIMESTAMPTZ(3);
CREATE INDEX "endpoints_listen_until_idx" ON "endpoints" ("listen_until") WHERE "listen_until" IS NOT NULL AND "deleted_at" IS NULL;
