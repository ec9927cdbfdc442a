import { describe, expect, it } from "vitest";
import { LARGE_BODY_BYTES, largeBody, Turns } from "./turns.ts";

describe("turns", () => {
  it("run one key's tasks one at a time, in order, and another key's beside them", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const task = async (key: string, name: string, ms: number) => {
      const end = await turns.take(key);
      log.push(`${name} starts`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`${name} ends`);
      end();
      end();
    };
    await Promise.all([task("a", "a1", 30), task("a", "a2", 5), task("b", "b1", 5)]);
    expect(log.indexOf("a2 starts")).toBeGreaterThan(log.indexOf("a1 ends"));
    expect(log.indexOf("b1 ends")).toBeLessThan(log.indexOf("a1 ends"));
    expect(turns.size()).toBe(0);
  });

  it("are taken by bodies over LARGE_BODY_BYTES, of no stated length, or compressed", () => {
    expect(largeBody({ "content-length": String(LARGE_BODY_BYTES + 1) })).toBe(true);
    expect(largeBody({ "content-length": String(LARGE_BODY_BYTES) })).toBe(false);
    expect(largeBody({})).toBe(false);
    expect(largeBody({ "transfer-encoding": "chunked" })).toBe(true);
    expect(largeBody({ "content-length": "900", "content-encoding": "gzip" })).toBe(true);
    expect(largeBody({ "content-length": "900", "content-encoding": "identity" })).toBe(false);
  });
});
