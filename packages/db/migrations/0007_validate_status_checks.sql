-- The rows written before 0006, checked against its constraints (SHARE UPDATE EXCLUSIVE: reads
-- and writes go on meanwhile).
ALTER TABLE "deliveries" VALIDATE CONSTRAINT "deliveries_status_check";
ALTER TABLE "attempts" VALIDATE CONSTRAINT "attempts_status_check";
ALTER TABLE "replays" VALIDATE CONSTRAINT "replays_status_check";
