import { afterAll, beforeAll, expect } from "vitest";
import { TransformPool, type TransformPoolOptions } from "./pool.ts";
import { TransformationError } from "./sandbox.ts";
import type { WebhookAttempt } from "./webhook.ts";

/** What the pool's tests share: a pool of two workers, an input, and how a run failed. */

export const BUDGET_MS = 200;

/** Two workers with a 200 ms budget, warmed before the file's tests and closed after them. */
export function sharedPool(): TransformPool {
  const pool = new TransformPool({
    workers: 2,
    cached: 64,
    queuePerOwner: 100,
    memoryBytes: 16 << 20,
    timeoutMs: BUDGET_MS,
  });
  beforeAll(() => pool.warm());
  afterAll(() => pool.close());
  return pool;
}

/**
 * `test` on a pool of one worker of its own (a 300 ms budget, 100 runs an owner may have waiting,
 * unless `options` say otherwise), warmed first and closed after.
 */
export async function withOneWorker(
  options: Partial<TransformPoolOptions>,
  test: (pool: TransformPool) => Promise<void>,
): Promise<void> {
  const one = new TransformPool({
    workers: 1,
    cached: 8,
    queuePerOwner: 100,
    memoryBytes: 16 << 20,
    timeoutMs: 300,
    ...options,
  });
  try {
    await one.warm();
    await test(one);
  } finally {
    await one.close();
  }
}

export const AT = Date.parse("2026-03-04T05:06:07.000Z");

/** An attempt to run a transformation on; `payload` given as a value, sent as its JSON. */
export function input(
  overrides: Partial<Omit<WebhookAttempt, "payload">> & { payload?: unknown } = {},
): WebhookAttempt {
  const { payload, ...rest } = overrides;
  return {
    event_id: "evt_1",
    url: "https://example.com/hook",
    headers: { "x-tenant": "acme" },
    payload: JSON.stringify(
      payload ?? { type: "invoice.paid", timestamp: "2026-03-04T05:06:00.000Z", data: { amount: 1200 } },
    ),
    ...rest,
  };
}

/** The TransformationError a run ends with. */
export async function failure(run: Promise<unknown>): Promise<TransformationError> {
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransformationError);
  return err as TransformationError;
}
