import { describe, expect, it } from "vitest";
import { niceMax, runs, toSlots } from "./chartScale.ts";

const at = (iso: string) => Date.parse(iso);
const bucket = (start: string, succeeded: number, failed: number, p50: number | null = 10) => ({
  start,
  succeeded,
  failed,
  p50_ms: p50,
  p95_ms: p50 === null ? null : p50 * 2,
});

describe("toSlots", () => {
  it("makes one slot per minute of the hour, the minute in progress last, with the buckets in place", () => {
    const slots = toSlots(
      [bucket("2026-01-01T11:05:00.000Z", 2, 1), bucket("2026-01-01T12:00:00.000Z", 4, 0)],
      at("2026-01-01T12:00:30Z"),
    );
    expect(slots).toHaveLength(60);
    expect(slots[0]?.start).toBe(at("2026-01-01T11:01:00Z"));
    expect(slots[59]).toEqual({
      start: at("2026-01-01T12:00:00Z"),
      succeeded: 4,
      failed: 0,
      p50: 10,
      p95: 20,
    });
    expect(slots[4]).toMatchObject({ succeeded: 2, failed: 1 });
    expect(slots.reduce((n, s) => n + s.succeeded + s.failed, 0)).toBe(7);
  });

  it("follows the server's clock when it is ahead of the browser's", () => {
    const slots = toSlots([bucket("2026-01-01T12:03:00.000Z", 1, 0)], at("2026-01-01T12:00:30Z"));
    expect(slots[59]).toMatchObject({ start: at("2026-01-01T12:03:00Z"), succeeded: 1 });
  });
});

describe("niceMax", () => {
  it.each([
    [0, 2, 2],
    [3, 1, 5],
    [7, 1, 10],
    [11, 1, 20],
    [42, 10, 50],
    [180, 10, 200],
  ])("%i (floor %i) → %i", (value, floor, max) => expect(niceMax(value, floor)).toBe(max));
});

describe("runs", () => {
  it("breaks a line where minutes have no value", () => {
    const slots = [10, null, 20, 30, null].map((p50, i) => ({
      start: i,
      succeeded: 0,
      failed: 0,
      p50,
      p95: p50,
    }));
    expect(runs(slots, (s) => s.p50)).toEqual([
      [{ i: 0, v: 10 }],
      [
        { i: 2, v: 20 },
        { i: 3, v: 30 },
      ],
    ]);
  });
});
