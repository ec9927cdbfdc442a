-- The size of an event's data as accepted, in bytes of JSON text: the dispatcher reads payloads
-- (to match filters, to send) in batches bounded by it, so that the largest events times the
-- widest fan-out never have to fit its heap at once. Null for events accepted before this
-- column: they count as the largest an event may be.
ALTER TABLE "events" ADD COLUMN "data_bytes" INTEGER;
