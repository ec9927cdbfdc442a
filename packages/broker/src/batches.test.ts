import { describe, expect, it } from "vitest";
import { batchPublisher } from "./batches.ts";
import type { Broker } from "./broker.ts";

/**
 * The batching itself, with publishes whose confirms the test gives: what goes in which
 * message, and when each caller's promise settles. (Against RabbitMQ: services/sender.)
 */
function confirmsByHand(perMessage: number) {
  const sent: { items: number[]; confirm: () => void; fail: (err: Error) => void }[] = [];
  const broker = {
    publish: (_name: string, payload: { results: { n: number }[] }) =>
      new Promise<void>((confirm, fail) =>
        sent.push({ items: payload.results.map((r) => r.n), confirm, fail }),
      ),
  } as unknown as Broker;
  const publisher = batchPublisher<"attempts.completed.v1", { n: number; traceparent?: string }>(
    broker,
    "attempts.completed.v1",
    "attempt.completed.v1",
    (results: { n: number }[]) => ({ results }) as never,
    perMessage,
  );
  return { p: publisher, sent };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("a batch publisher", () => {
  it("sends a lone item at once, holds what comes while two are unconfirmed, then sends it together", async () => {
    const { p, sent } = confirmsByHand(3);
    const settled: number[] = [];
    const add = (n: number) => p.add({ n }).then(() => settled.push(n));
    void add(1);
    await tick();
    void add(2);
    await tick();
    expect(sent.map((s) => s.items)).toEqual([[1], [2]]);
    for (const n of [3, 4, 5, 6, 7]) void add(n);
    await tick();
    expect(sent, "nothing more while two are unconfirmed").toHaveLength(2);
    sent[1]!.confirm();
    await tick();
    await tick();
    expect(settled).toEqual([2]);
    // One confirm frees one slot: at most 3 a message, the rest at the next free slot.
    expect(sent.map((s) => s.items)).toEqual([[1], [2], [3, 4, 5]]);
    sent[0]!.confirm();
    await tick();
    await tick();
    expect(sent.map((s) => s.items)).toEqual([[1], [2], [3, 4, 5], [6, 7]]);
    expect(settled.sort()).toEqual([1, 2]);
  });

  it("fails exactly the items of a message that was not confirmed", async () => {
    const { p, sent } = confirmsByHand(10);
    const outcomes = [1, 2, 3].map((n) =>
      p.add({ n }).then(
        () => "ok",
        (e: Error) => e.message,
      ),
    );
    await tick();
    expect(sent.map((s) => s.items)).toEqual([[1, 2, 3]]);
    const later = p.add({ n: 4 }).then(() => "ok");
    await tick();
    sent[0]!.fail(new Error("channel closed"));
    await tick();
    sent[1]!.confirm();
    expect(await Promise.all([...outcomes, later])).toEqual([
      "channel closed",
      "channel closed",
      "channel closed",
      "ok",
    ]);
  });
});
