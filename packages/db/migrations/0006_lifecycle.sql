-- AlterTable
ALTER TABLE "apps" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "apps_account_id_deleted_at_idx" ON "apps"("account_id", "deleted_at");

-- The statuses of src/statuses.ts, enforced (Prisma's schema cannot say this; test/migrations.test.ts
-- checks the lists match). NOT VALID: new rows are checked at once, without scanning the old ones
-- under this transaction's exclusive lock; 0007 checks those in a transaction of its own, while
-- the tables stay readable and writable.
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_status_check"
  CHECK ("status" IN ('pending', 'succeeded', 'retrying', 'failed', 'dropped')) NOT VALID;
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_status_check"
  CHECK ("status" IN ('pending', 'succeeded', 'failed')) NOT VALID;
ALTER TABLE "replays" ADD CONSTRAINT "replays_status_check"
  CHECK ("status" IN ('queued', 'running', 'completed')) NOT VALID;
