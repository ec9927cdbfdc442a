import type { DispatcherDeps } from "./deps.ts";
import { dispatchDue } from "./due.ts";

/**
 * Recovers attempts a crash left behind: scheduled attempts never handed to a sender
 * (`sent_at` null) SWEEP_GRACE after they were due, and sent attempts with no result
 * ATTEMPT_DEADLINE after they were sent. A transaction-scoped advisory lock lets one
 * dispatcher replica sweep at a time.
 */
const SWEEP_LOCK = 727_002;

export async function sweepOnce(deps: DispatcherDeps): Promise<number> {
  const { prisma, config } = deps;
  const now = Date.now();
  const dueBefore = new Date(now - config.sweepGraceMs);
  const sentBefore = new Date(now - config.attemptDeadlineMs);
  return prisma.$transaction(
    async (tx) => {
      const [lock] = await tx.$queryRaw<
        { locked: boolean }[]
      >`SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK}) AS locked`;
      if (!lock?.locked) return 0;
      const rows = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM attempts
        WHERE status = 'pending'
          AND ((sent_at IS NULL AND scheduled_at < ${dueBefore}) OR sent_at < ${sentBefore})
        ORDER BY scheduled_at LIMIT 500`;
      if (rows.length) {
        deps.logger.warn({ attempts: rows.length }, "sweeper recovering attempts left pending");
        await dispatchDue(
          deps,
          rows.map((r) => r.id),
        );
      }
      return rows.length;
    },
    { timeout: 60_000 },
  );
}

export function startSweeper(deps: DispatcherDeps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOnce(deps).catch((err) =>
      deps.logger.warn({ err: (err as Error).message }, "sweep failed; will retry"),
    );
  }, deps.config.sweepIntervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
