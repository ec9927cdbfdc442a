import { afterEach, describe, expect, it, vi } from "vitest";
import { ConnectionPool, configurePools } from "./pool.ts";

type Fake = { name: string; closed: boolean };

function pool(max: number) {
  const closed: string[] = [];
  const made = new ConnectionPool<Fake>(max, (c) => {
    c.closed = true;
    closed.push(c.name);
  });
  const get = (name: string) => made.get(name, async () => ({ name, closed: false }));
  return { made, get, closed };
}

afterEach(() => {
  vi.useRealTimers();
  configurePools({ busyMs: 30_000 });
});

describe("the pool of a transport's connections", () => {
  it("keeps past its bound a connection used within the longest a send takes: it may carry one", async () => {
    vi.useFakeTimers();
    configurePools({ busyMs: 10_000 });
    const { made, get, closed } = pool(2);
    await get("a");
    await get("b");
    await get("c");
    await vi.advanceTimersByTimeAsync(0);
    expect(closed).toEqual([]);
    expect(made.size).toBe(3);

    await vi.advanceTimersByTimeAsync(10_001);
    await get("d");
    await vi.advanceTimersByTimeAsync(0);
    // Idle now: room is made from the oldest, down to the bound.
    expect(closed).toEqual(["a", "b"]);
    expect(made.size).toBe(2);
    await made.close();
  });

  it("closes the oldest regardless past four times its bound", async () => {
    configurePools({ busyMs: 60_000 });
    const { made, get, closed } = pool(1);
    for (const name of ["a", "b", "c", "d", "e"]) await get(name);
    await new Promise((r) => setImmediate(r));
    expect(closed).toEqual(["a"]);
    expect(made.size).toBe(4);
    await made.close();
  });

  it("closes connections idle for a minute", async () => {
    vi.useFakeTimers();
    const { made, get, closed } = pool(8);
    await get("a");
    await vi.advanceTimersByTimeAsync(40_000);
    await get("b");
    // The sweep every 30 s: at 90 s, a is 90 s idle, b 50 s.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(closed).toEqual(["a"]);
    expect(made.size).toBe(1);
    await made.close();
    expect(closed).toEqual(["a", "b"]);
  });

  it("reuses a destination's connection, and opens again one that failed to open", async () => {
    const { made, get } = pool(4);
    expect(await get("a")).toBe(await get("a"));
    const failing = made.get("x", async () => {
      throw new Error("refused");
    });
    await expect(failing).rejects.toThrow("refused");
    await new Promise((r) => setImmediate(r));
    expect(await made.get("x", async () => ({ name: "x2", closed: false }))).toMatchObject({ name: "x2" });
    await made.close();
  });
});
