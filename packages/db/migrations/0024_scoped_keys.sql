-- Scoped API keys: what a key may do (`@herald/contracts/scopes`; `*` is everything, what every
-- key made before held), the one app it may be confined to, and when it stops working.
ALTER TABLE "api_keys" ADD COLUMN "scopes" TEXT[] DEFAULT ARRAY['*']::TEXT[];
ALTER TABLE "api_keys" ADD COLUMN "app_id" TEXT;
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_app_id_fkey"
  FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "api_keys_app_id_idx" ON "api_keys"("app_id");

-- A dashboard session holds the scopes of what opened it (a key, a dashboard session, or a
-- person's role at sign-in); a portal session's reach is its app and `read_only`.
ALTER TABLE "sessions" ADD COLUMN "scopes" TEXT[] DEFAULT ARRAY['*']::TEXT[];
