import { expireEvents, removeExpired } from "@herald/db/lifecycle";
import { inTransaction, type PoolClient } from "@herald/db/pool";
import type { DispatcherDeps } from "./deps.ts";
import { repeat } from "./repeat.ts";

/**
 * Retention and housekeeping, every MAINTENANCE_INTERVAL: expired sessions and replays
 * completed before their account's retention, then each account's events older than its
 * retention (`retention_seconds`, else RETENTION) with their deliveries and attempts
 * (`expireEvents`: only events done with). Accounts take turns, a batch each a round, so one
 * account's large backlog does not hold up the others', and a pass cut short by its budget
 * (PASS_BUDGET_MS) is followed by one that starts after the account whose turn was last.
 *
 * One dispatcher at a time: each batch is a transaction that first takes a transaction-scoped
 * advisory lock, and a pass ends as soon as another dispatcher holds it. One connection at a
 * time, so a pool of one never waits on itself, and nothing outlives a transaction, so a
 * pooler in transaction mode keeps it.
 */
const MAINTENANCE_LOCK = 727_003;
const BATCH = 500;
const PASS_BUDGET_MS = 10_000;

export type MaintenancePass = {
  events: number;
  sessions: number;
  replays: number;
  /** False when the budget ran out, or another dispatcher was at work. */
  done: boolean;
  /** The account whose turn was last: a pass cut short resumes after it. */
  last: string | null;
};

/** Runs `work` in a transaction holding the maintenance lock; null when another holds it. */
async function claimed<T>(deps: DispatcherDeps, work: (tx: PoolClient) => Promise<T>): Promise<T | null> {
  return inTransaction(deps.db, async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      MAINTENANCE_LOCK,
    ]);
    return rows[0]?.locked ? work(tx) : null;
  });
}

export async function maintainOnce(
  deps: DispatcherDeps,
  resumeAfter: string | null,
): Promise<MaintenancePass> {
  const { db, config } = deps;
  const until = Date.now() + PASS_BUDGET_MS;
  const pass: MaintenancePass = { events: 0, sessions: 0, replays: 0, done: false, last: resumeAfter };
  const housekept = await claimed(deps, (tx) => removeExpired(tx, config.retentionMs, BATCH));
  if (!housekept) return pass;
  Object.assign(pass, housekept);

  const { rows: all } = await db.query<{ id: string; retention_ms: string | null }>(
    "SELECT id, retention_seconds::bigint * 1000 AS retention_ms FROM accounts ORDER BY id",
  );
  // Those after the last pass's last turn first: no account waits behind the same ones each pass.
  let waiting = [
    ...all.filter((a) => resumeAfter !== null && a.id > resumeAfter),
    ...all.filter((a) => resumeAfter === null || a.id <= resumeAfter),
  ];
  while (waiting.length) {
    const next: typeof waiting = [];
    for (const account of waiting) {
      if (Date.now() > until) return pass;
      const retentionMs = account.retention_ms === null ? config.retentionMs : Number(account.retention_ms);
      const olderThan = new Date(Date.now() - retentionMs);
      const batch = await claimed(deps, (tx) => expireEvents(tx, account.id, olderThan, BATCH));
      if (!batch) return pass;
      pass.events += batch.events;
      pass.last = account.id;
      if (batch.more) next.push(account);
    }
    waiting = next;
  }
  return { ...pass, done: pass.sessions < BATCH && pass.replays < BATCH, last: null };
}

export function startMaintenance(deps: DispatcherDeps): () => Promise<void> {
  let resumeAfter: string | null = null;
  return repeat(deps.config.maintenanceIntervalMs, async () => {
    try {
      const pass = await maintainOnce(deps, resumeAfter);
      resumeAfter = pass.last;
      if (pass.events || pass.sessions || pass.replays) {
        deps.metrics.expired.inc(pass.events);
        deps.logger.info(
          { events: pass.events, sessions: pass.sessions, replays: pass.replays, more: !pass.done },
          "retention: expired rows removed",
        );
      }
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message }, "maintenance pass failed; will retry");
    }
  });
}
