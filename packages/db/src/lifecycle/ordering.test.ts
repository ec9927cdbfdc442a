import { describe, expect, it } from "vitest";
import type { Admission } from "./flow.ts";
import { type FifoHead, laterEvent, orderingHold } from "./ordering.ts";

const now = new Date("2026-11-25T00:00:00.000Z");
const later = (ms: number) => new Date(now.getTime() + ms);
const free: Admission = { take: 0, probe: false, heldBy: null, retryAt: null };
const head = (over: Partial<FifoHead> = {}): FifoHead => ({
  head_id: "atmpt_1",
  head_event_id: "evt_1",
  head_sent_at: null,
  head_due_at: now,
  other_in_flight: false,
  head_behind_fan_out: false,
  fifo_queued: 2,
  ...over,
});

describe("orderingHold", () => {
  it("holds nothing when nothing is open", () => {
    expect(orderingHold(head({ head_id: null, fifo_queued: 0 }), 0, free, now)).toEqual({
      heldBy: null,
      retryAt: null,
    });
  });

  it("holds those behind a head just taken or in flight, and looks again within a second", () => {
    expect(orderingHold(head(), 1, { ...free, take: 1 }, now)).toEqual({
      heldBy: "ordering",
      retryAt: later(1000),
    });
    expect(orderingHold(head({ head_sent_at: now }), 0, free, now).heldBy).toBe("ordering");
    // Alone in flight: nothing waits.
    expect(orderingHold(head({ head_sent_at: now, fifo_queued: 1 }), 0, free, now).heldBy).toBeNull();
  });

  it("holds the head while the attempt released before it is still in flight", () => {
    // A replay made an earlier event the head while a later one's attempt was out.
    expect(orderingHold(head({ other_in_flight: true, fifo_queued: 1 }), 0, free, now)).toEqual({
      heldBy: "ordering",
      retryAt: later(1000),
    });
  });

  it("holds those behind a head waiting for its retry until the retry is due", () => {
    expect(orderingHold(head({ head_due_at: later(5000) }), 0, free, now)).toEqual({
      heldBy: "ordering",
      retryAt: later(5000),
    });
    // A head alone waiting for its retry is released by its due message, as any retry.
    expect(orderingHold(head({ head_due_at: later(5000), fifo_queued: 1 }), 0, free, now).heldBy).toBeNull();
  });

  it("holds the head itself while an earlier event's fan-out is awaited", () => {
    expect(orderingHold(head({ head_behind_fan_out: true, fifo_queued: 1 }), 0, free, now)).toEqual({
      heldBy: "fan_out",
      retryAt: later(200),
    });
  });

  it("gives the gate's own reason first: a pause holds the head whatever is behind it", () => {
    const paused: Admission = { take: 0, probe: false, heldBy: "paused", retryAt: later(30_000) };
    expect(orderingHold(head(), 0, paused, now)).toEqual({ heldBy: "paused", retryAt: later(30_000) });
  });

  it("keeps the later of two event ids", () => {
    expect(laterEvent(null, "evt_B")).toBe("evt_B");
    expect(laterEvent("evt_C", "evt_B")).toBe("evt_C");
    expect(laterEvent("evt_A", null)).toBe("evt_A");
  });
});
