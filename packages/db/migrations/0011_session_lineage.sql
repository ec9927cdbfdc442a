-- Where a session came from: the API key that made it (inherited by what a dashboard session
-- makes), and the dashboard session that made a portal session. Revoking a key ends every
-- session it led to; revoking a dashboard session ends the portal sessions it made.
ALTER TABLE "sessions" ADD COLUMN "key_id" TEXT,
ADD COLUMN "parent_id" TEXT;
CREATE INDEX "sessions_key_id_idx" ON "sessions"("key_id");
CREATE INDEX "sessions_parent_id_idx" ON "sessions"("parent_id");
