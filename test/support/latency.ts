import { expect } from "vitest";
import type { fixtures } from "./fixtures.ts";
import type { Receiver } from "./receiver.ts";

/**
 * Sends `count` events of `type` at 10 a second through `f`, waits until `path` received them
 * all, and returns each one's time from its 201 to its arrival, in ms, sorted.
 */
export async function latenciesAt10PerSecond(
  f: ReturnType<typeof fixtures>,
  receiver: Receiver,
  type: string,
  path: string,
  count: number,
): Promise<number[]> {
  const accepted = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    accepted.set(await f.send(type), Date.now());
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - started))));
  }
  await expect.poll(() => receiver.received(path).length, { timeout: 30_000, interval: 100 }).toBe(count);
  return receiver
    .received(path)
    .map((r) => r.at - accepted.get(String(r.headers["webhook-id"]))!)
    .sort((a, b) => a - b);
}

/** The 99th percentile of sorted values (nearest rank). */
export const p99 = (sorted: number[]) => sorted[Math.ceil(sorted.length * 0.99) - 1]!;

/** The median of sorted values (nearest rank). */
export const median = (sorted: number[]) => sorted[Math.ceil(sorted.length * 0.5) - 1]!;
