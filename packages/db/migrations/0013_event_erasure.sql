-- An event's payload can be erased (DELETE /v3/events/{id}/data): `data` becomes `{}` and this
-- says when. The event, its deliveries and its attempts stay.
ALTER TABLE "events" ADD COLUMN "data_erased_at" TIMESTAMPTZ(3);
