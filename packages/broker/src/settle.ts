/**
 * What becomes of messages once their handler has run: the one place where ack, retry and
 * dead-letter are decided. No I/O of its own; the consumer supplies it (`SettleIo`), so the
 * decisions are unit-tested without a broker.
 *
 * - Success: every message is acked.
 * - A transient error (the database or the broker unreachable, a deadlock, a serialization
 *   failure): the same messages are tried again in place, with backoff, for as long as it
 *   takes. They stay in hand, so an outage neither burns through a queue's delivery limit nor
 *   reorders anything.
 * - Any other error (a value the database refuses, a constraint the message can never meet, a
 *   bug): a batch is split in halves, each tried on its own, until the message at fault is
 *   alone; the others commit. A message alone that fails `maxFailures` times in a row is
 *   dead-lettered with the error, and the queue moves on.
 * - Every channel the messages came on is gone, or the consumer is stopping: no more tries;
 *   the broker hands the messages to another consumer.
 */
export type SettlePolicy = {
  isTransient(err: unknown): boolean;
  /** Tries of a message alone before it is dead-lettered: 5, so a brief oddity is not fatal. */
  maxFailures: number;
  /** The wait before try `n` (1-based) of the same work. */
  backoffMs(n: number): number;
};

export type SettleIo<T> = {
  ack(items: T[]): void;
  deadLetter(item: T, error: Error, failures: number): Promise<void>;
  /** False once the item's channel is closed: it can no longer be acked. */
  live(item: T): boolean;
  /** True once the consumer is stopping: a failed try is not tried again. */
  stopping(): boolean;
  wait(ms: number): Promise<void>;
  onRetry(info: { items: number; error: Error; transient: boolean; waitMs: number }): void;
};

/** 200 ms doubling to 10 s: a restart of PostgreSQL or RabbitMQ is ridden out in a few tries. */
export const defaultBackoffMs = (n: number) => Math.min(200 * 2 ** (n - 1), 10_000);

const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

export async function settle<T>(
  items: T[],
  run: (items: T[]) => Promise<void>,
  io: SettleIo<T>,
  policy: SettlePolicy,
): Promise<void> {
  let transientTries = 0;
  let failures = 0;
  for (;;) {
    if (!items.some((item) => io.live(item))) return;
    let error: Error;
    try {
      await run(items);
      io.ack(items);
      return;
    } catch (err) {
      error = asError(err);
    }
    if (io.stopping()) return;
    const transient = policy.isTransient(error);
    if (!transient && items.length > 1) {
      const half = Math.ceil(items.length / 2);
      await Promise.all([
        settle(items.slice(0, half), run, io, policy),
        settle(items.slice(half), run, io, policy),
      ]);
      return;
    }
    if (!transient && ++failures >= policy.maxFailures) {
      await io.deadLetter(items[0]!, error, failures);
      return;
    }
    const waitMs = policy.backoffMs(transient ? ++transientTries : failures);
    io.onRetry({ items: items.length, error, transient, waitMs });
    await io.wait(waitMs);
    if (io.stopping()) return;
  }
}
