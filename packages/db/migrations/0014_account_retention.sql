-- An account's retention (seconds): its events, with their deliveries and attempts, are removed
-- once older than this. NULL: the dispatcher's RETENTION applies. Set by the operator (/admin).
ALTER TABLE "accounts" ADD COLUMN "retention_seconds" INTEGER;
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_retention_seconds_check" CHECK ("retention_seconds" > 0);
