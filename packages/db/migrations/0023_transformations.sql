-- An endpoint's transformation (packages/transform): the JavaScript source of its
-- `handler(webhook)`, at most 64 KiB; null: none. The senders run it on each attempt.
ALTER TABLE "endpoints" ADD COLUMN "transformation" TEXT;
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_transformation_size"
  CHECK (octet_length("transformation") <= 65536);

-- A transformation may cancel a delivery: its attempt and the delivery end `cancelled`, final,
-- and neither a success nor a failure. The new checks take every value the old ones did, so
-- validating them (a scan of each partition) cannot fail.
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_status_check";
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_status_check"
  CHECK ("status" IN ('pending', 'succeeded', 'retrying', 'failed', 'dropped', 'cancelled'));
ALTER TABLE "attempts" DROP CONSTRAINT "attempts_status_check";
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_status_check"
  CHECK ("status" IN ('pending', 'succeeded', 'failed', 'cancelled'));

-- The request a transformation made in place of Herald's: its method, URL and body, as sent
-- (the body is what the signature covers). Null: the request was Herald's own (POST to the
-- endpoint's URL with the event's payload).
ALTER TABLE "attempts" ADD COLUMN "request_method" TEXT;
ALTER TABLE "attempts" ADD COLUMN "request_url" TEXT;
ALTER TABLE "attempts" ADD COLUMN "request_body" TEXT;
