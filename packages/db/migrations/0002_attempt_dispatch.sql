-- AlterTable
ALTER TABLE "attempts" ADD COLUMN     "replay_id" TEXT,
ADD COLUMN     "sent_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "attempts_status_scheduled_at_idx" ON "attempts"("status", "scheduled_at");

-- CreateIndex
CREATE INDEX "attempts_replay_id_idx" ON "attempts"("replay_id");

