-- Sessions opened before 0011 recorded where they came from: no revoked key or ended dashboard
-- session can end them, and a portal link made from a dashboard session may run for 7 days.
-- They end here, once; a customer opens a new link. Every session made since has its key.
UPDATE "sessions" SET "revoked_at" = now()
WHERE "key_id" IS NULL AND "revoked_at" IS NULL AND "expires_at" > now();
