-- When fan-out found no endpoint for an event: retention then knows it is done with, though it
-- has no delivery (an event with deliveries was fanned out). Events already without deliveries
-- a day after they were accepted are taken as fanned out.
ALTER TABLE "events" ADD COLUMN "fanned_out_at" TIMESTAMPTZ(3);
UPDATE "events" ev SET "fanned_out_at" = ev."created_at"
WHERE ev."created_at" < now() - interval '1 day'
  AND NOT EXISTS (SELECT 1 FROM "deliveries" d WHERE d."event_id" = ev."id");
