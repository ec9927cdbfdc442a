import { describe, expect, it } from "vitest";
import { defaultBackoffMs, type SettlePolicy, settle } from "./settle.ts";

class Transient extends Error {}

const policy: SettlePolicy = {
  isTransient: (err) => err instanceof Transient,
  maxFailures: 5,
  backoffMs: defaultBackoffMs,
};

/** Runs settle over messages 0..n-1 and records every decision it makes. */
async function decide(
  count: number,
  run: (items: number[], call: number) => void,
  { live = (_: number): boolean => true, stopping = (): boolean => false } = {},
) {
  const acked: number[] = [];
  const dead: { item: number; error: string; failures: number }[] = [];
  const waits: number[] = [];
  const calls: number[][] = [];
  await settle(
    Array.from({ length: count }, (_, i) => i),
    async (items) => {
      calls.push(items);
      run(items, calls.length);
    },
    {
      ack: (items) => acked.push(...items),
      deadLetter: async (item, error, failures) => {
        dead.push({ item, error: error.message, failures });
      },
      live,
      stopping,
      wait: async (ms) => {
        waits.push(ms);
      },
      onRetry: () => {},
    },
    policy,
  );
  return { acked: acked.sort((a, b) => a - b), dead, waits, calls };
}

describe("settling messages after their handler ran", () => {
  it("acks the whole batch when the handler succeeds, in one call", async () => {
    const r = await decide(4, () => {});
    expect(r).toMatchObject({ acked: [0, 1, 2, 3], dead: [], waits: [], calls: [[0, 1, 2, 3]] });
  });

  it("retries a transient failure in place, the same batch, with growing waits, and never dead-letters it", async () => {
    const r = await decide(3, (_items, call) => {
      if (call <= 8) throw new Transient("connection terminated");
    });
    expect(r.acked).toEqual([0, 1, 2]);
    expect(r.dead).toEqual([]);
    expect(r.calls.every((c) => c.length === 3)).toBe(true);
    expect(r.waits).toEqual([200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
  });

  it("splits a batch that fails for good, commits the others, and dead-letters the bad one after 5 tries alone", async () => {
    const r = await decide(8, (items) => {
      if (items.includes(5)) throw Object.assign(new Error("invalid byte sequence"), { code: "22021" });
    });
    expect(r.acked).toEqual([0, 1, 2, 3, 4, 6, 7]);
    expect(r.dead).toEqual([{ item: 5, error: "invalid byte sequence", failures: 5 }]);
    // Alone, it was tried 5 times, with a wait between tries.
    expect(r.calls.filter((c) => c.length === 1 && c[0] === 5)).toHaveLength(5);
    expect(r.waits).toEqual([200, 400, 800, 1600]);
  });

  it("isolates several bad messages of one batch, each on its own", async () => {
    const r = await decide(10, (items) => {
      if (items.includes(0) || items.includes(9)) throw new Error("bug");
    });
    expect(r.acked).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(r.dead.map((d) => d.item).sort()).toEqual([0, 9]);
  });

  it("lets a message that fails for good once, then succeeds, through without dead-lettering it", async () => {
    const r = await decide(1, (_items, call) => {
      if (call === 1) throw new Error("odd");
    });
    expect(r).toMatchObject({ acked: [0], dead: [] });
  });

  it("gives up on messages whose channel closed: no ack, no dead letter, no more tries", async () => {
    let open = true;
    const r = await decide(
      2,
      () => {
        open = false;
        throw new Transient("broker gone");
      },
      { live: () => open },
    );
    expect(r).toMatchObject({ acked: [], dead: [], calls: [[0, 1]] });
  });

  it("stops trying once the consumer is stopping, leaving the messages to the broker", async () => {
    let stopping = false;
    const r = await decide(
      1,
      () => {
        stopping = true;
        throw new Transient("database away");
      },
      { stopping: () => stopping },
    );
    expect(r).toMatchObject({ acked: [], dead: [], calls: [[0]] });
  });
});
