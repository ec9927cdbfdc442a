import type { StatsBucket } from "../types.ts";

/**
 * Pure helpers for the attempt charts: the window as one slot per minute (the API sends only
 * the minutes that had attempts), and round axis maxima.
 */
export type Slot = {
  start: number;
  succeeded: number;
  failed: number;
  p50: number | null;
  p95: number | null;
};

export function toSlots(buckets: StatsBucket[], now: number, count = 60, stepMs = 60_000): Slot[] {
  // The last slot is the minute in progress; the newest bucket decides it when clocks disagree.
  const newest = buckets.reduce((t, b) => Math.max(t, Date.parse(b.start)), 0);
  const last = Math.max(Math.floor(now / stepMs) * stepMs, newest);
  const first = last - (count - 1) * stepMs;
  const slots: Slot[] = Array.from({ length: count }, (_, i) => ({
    start: first + i * stepMs,
    succeeded: 0,
    failed: 0,
    p50: null,
    p95: null,
  }));
  for (const b of buckets) {
    const slot = slots[Math.round((Date.parse(b.start) - first) / stepMs)];
    if (!slot) continue;
    slot.succeeded += b.succeeded;
    slot.failed += b.failed;
    slot.p50 = b.p50_ms;
    slot.p95 = b.p95_ms;
  }
  return slots;
}

/** The smallest 1, 2 or 5 × 10ⁿ at or above `value` (at least `floor`), for an axis maximum. */
export function niceMax(value: number, floor = 1): number {
  const v = Math.max(value, floor);
  const magnitude = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= v) return step * magnitude;
  return 10 * magnitude;
}

/** Consecutive runs of slots that have a value: a line breaks over minutes without attempts. */
export function runs(slots: Slot[], value: (s: Slot) => number | null): { i: number; v: number }[][] {
  const out: { i: number; v: number }[][] = [];
  let current: { i: number; v: number }[] = [];
  slots.forEach((slot, i) => {
    const v = value(slot);
    if (v === null) {
      if (current.length) out.push(current);
      current = [];
    } else current.push({ i, v });
  });
  if (current.length) out.push(current);
  return out;
}
