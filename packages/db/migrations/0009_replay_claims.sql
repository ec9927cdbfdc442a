-- A replay claims the failed deliveries it counts when it is asked for, in the same
-- transaction: two replays asked at once never count one delivery twice, so `queued` is exact.
-- The claim is cleared when the replay takes the delivery, or when the replay completes.
ALTER TABLE "deliveries" ADD COLUMN "replay_id" TEXT;
CREATE INDEX "deliveries_replay_id_idx" ON "deliveries"("replay_id") WHERE "replay_id" IS NOT NULL;
