-- The audit log: every change made through the API, the dashboard or the portal, written in the
-- transaction of the change. Who (`actor_type`: api_key, dashboard_session, portal_session,
-- person or operator, and its id; a person's email), what (`action`, `object_type`,
-- `object_id`, the names of the fields sent), and from where (the request's id, the source
-- address). Never a value, so never a secret. The dispatcher removes records older than the
-- account's retention, or AUDIT_RETENTION when that is longer.
CREATE TABLE "audit_log" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT NOT NULL,
    "actor_name" TEXT,
    "action" TEXT NOT NULL,
    "object_type" TEXT NOT NULL,
    "object_id" TEXT,
    "fields" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "request_id" TEXT,
    "source_ip" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_log_account_id_id_idx" ON "audit_log"("account_id", "id");
CREATE INDEX "audit_log_created_at_idx" ON "audit_log"("created_at");
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_account_id_fkey"
  FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
