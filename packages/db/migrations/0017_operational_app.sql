-- Each account may have one app of its own for Herald's operational webhooks (endpoint.disabled,
-- delivery.exhausted, ...): its endpoints receive what happens to the account's other endpoints.
-- Made on first use; never listed with the account's apps.
ALTER TABLE "apps" ADD COLUMN "operational" BOOLEAN NOT NULL DEFAULT false;
CREATE UNIQUE INDEX "apps_account_operational_key" ON "apps" ("account_id")
  WHERE "operational" AND "deleted_at" IS NULL;
