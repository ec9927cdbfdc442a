import { describe, expect, it } from "vitest";
import { idFloor, isId, newId, ulid } from "./ids.ts";

describe("ids", () => {
  it("are prefixed, 26 Crockford characters after the prefix", () => {
    expect(newId("endpoint")).toMatch(/^ep_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(newId("attempt")).toMatch(/^atmpt_/);
    expect(isId("endpoint", newId("endpoint"))).toBe(true);
    expect(isId("endpoint", newId("event"))).toBe(false);
    expect(isId("app", "app_short")).toBe(false);
  });

  it("sort in creation order, even many in one millisecond", () => {
    const ids = Array.from({ length: 5000 }, () => newId("event"));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("bound a time window from below", () => {
    const before = idFloor("attempt", Date.now() - 1000);
    const made = newId("attempt");
    expect(before < made).toBe(true);
    expect(idFloor("attempt", Date.now() + 1000) > made).toBe(true);
  });

  it("encode the time first, so later times sort later", () => {
    expect(ulid(1_000_000_000_000) < ulid(1_000_000_000_001)).toBe(true);
    expect(ulid(Date.UTC(2026, 0, 1)).slice(0, 10) < ulid(Date.UTC(2027, 0, 1)).slice(0, 10)).toBe(true);
  });
});
