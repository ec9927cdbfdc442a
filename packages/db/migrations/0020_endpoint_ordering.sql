-- An endpoint's ordering: `none` (the default) sends its deliveries as the release gate allows,
-- `fifo` one at a time in the order their events were accepted (lifecycle/release.ts).
ALTER TABLE "endpoints" ADD COLUMN "ordering" TEXT NOT NULL DEFAULT 'none';
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_ordering_check" CHECK ("ordering" IN ('none', 'fifo'));

-- A fifo endpoint's last released event: the gate waits for the fan-out of events accepted
-- between it and the next (they go first), and looks no further back.
ALTER TABLE "endpoint_flows" ADD COLUMN "fifo_after" TEXT;
-- A fifo endpoint's attempt released last: while it is pending and sent, no other goes, even
-- when an earlier event's attempt (a replay, a late fan-out) has become the head meanwhile.
ALTER TABLE "endpoint_flows" ADD COLUMN "fifo_sent" TEXT;

-- Each endpoint's open attempts in the order their events were accepted: the head of a fifo
-- endpoint's queue, and of what a fifo endpoint has in flight, in one index step.
CREATE INDEX "attempts_open_event_idx" ON "attempts"("endpoint_id", "event_id", "attempt_number") WHERE "status" = 'pending';
