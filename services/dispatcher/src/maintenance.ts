import { idFloor } from "@herald/db/ids";
import {
  createRanges,
  dropRange,
  type ExpireScope,
  expireEvents,
  type Hold,
  logPartitions,
  rangeHeld,
  rangesBefore,
  removeExpired,
} from "@herald/db/lifecycle";
import { inTransaction, type PoolClient } from "@herald/db/pool";
import type { DispatcherDeps } from "./deps.ts";
import { endListeners } from "./endListeners.ts";
import { repeat } from "./repeat.ts";

/**
 * Retention and housekeeping, every MAINTENANCE_INTERVAL (and once at start):
 * 1. expired sessions, replays completed before their account's retention, and audit records
 *    past it (or past AUDIT_RETENTION, when that is longer);
 * 2. the delivery log's partitions: ranges made ahead of time (two PARTITION_INTERVALs, and at
 *    least three passes, ahead), and ranges older than the longest retention (RETENTION or an
 *    account's own, whichever is longer) dropped whole, unless a delivery in one is still on its
 *    schedule (the range then waits for it to end);
 * 3. the row purge, where a partition drop does not reach: the events of an account with a
 *    shorter retention than the longest, and those in the catch-all partitions (`legacy`, what
 *    the log held before it was partitioned, and `default`, rows no range was made for in time),
 *    with their deliveries and attempts (`expireEvents`: only events done with). Accounts take
 *    turns, a batch each a round, so one account's large backlog does not hold up the others',
 *    and a pass cut short by its budget (PASS_BUDGET_MS) is followed by one that starts after
 *    the account whose turn was last.
 *
 * One dispatcher at a time: each step is a transaction that first takes a transaction-scoped
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
  /** Audit records past their retention. */
  audit: number;
  /** `herald listen` endpoints deleted because their lease ran out. */
  listeners: number;
  /** Partitions (each a range of the three tables) made, and dropped. */
  created: number;
  dropped: number;
  /** Ranges past the retention kept, and why (`rangeHeld`). */
  held: { partition: string; reason: Hold }[];
  /** False when the budget ran out, or another dispatcher was at work. */
  done: boolean;
  /** The account whose turn was last: a pass cut short resumes after it. */
  last: string | null;
};

/** A step that failed on `lock_timeout` (55P03) ends as `fallback`; any other failure stands. */
function unlessLockTimeout<T>(fallback: T): (err: unknown) => T {
  return (err) => {
    if ((err as { code?: string }).code === "55P03") return fallback;
    throw err;
  };
}

/** Runs `work` in a transaction holding the maintenance lock; null when another holds it. */
async function claimed<T>(deps: DispatcherDeps, work: (tx: PoolClient) => Promise<T>): Promise<T | null> {
  return inTransaction(deps.db, async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      MAINTENANCE_LOCK,
    ]);
    return rows[0]?.locked ? work(tx) : null;
  });
}

type Account = { id: string; retentionMs: number };

async function accountsByRetention(deps: DispatcherDeps): Promise<Account[]> {
  const { rows } = await deps.db.query<{ id: string; retention_ms: string | null }>(
    "SELECT id, retention_seconds::bigint * 1000 AS retention_ms FROM accounts ORDER BY id",
  );
  return rows.map((a) => ({
    id: a.id,
    retentionMs: a.retention_ms === null ? deps.config.retentionMs : Number(a.retention_ms),
  }));
}

/** Where the row purge looks for an account's expired events (see ExpireScope). */
function scopesOf(account: Account, now: number, horizonMs: number, catchAlls: ExpireScope["partition"][]) {
  const olderThan = new Date(now - account.retentionMs);
  const scopes: ExpireScope[] = catchAlls.map((partition) => ({
    accountId: account.id,
    olderThan,
    notBefore: null,
    partition,
  }));
  if (account.retentionMs < horizonMs)
    scopes.push({ accountId: account.id, olderThan, notBefore: new Date(now - horizonMs), partition: null });
  return scopes;
}

/** One account's turn: up to BATCH events from its scopes, in order. */
async function expireTurn(tx: PoolClient, scopes: ExpireScope[]): Promise<{ events: number; more: boolean }> {
  const turn = { events: 0, more: false };
  for (const scope of scopes) {
    const batch = await expireEvents(tx, scope, BATCH - turn.events);
    turn.events += batch.events;
    turn.more ||= batch.more;
    if (turn.events >= BATCH) return { events: turn.events, more: true };
  }
  return turn;
}

/**
 * One pass. `fannedOut`: ranges past the retention already found to hold no event still waiting
 * for its fan-out, which stays so (`rangeHeld`); kept from pass to pass.
 */
export async function maintainOnce(
  deps: DispatcherDeps,
  resumeAfter: string | null,
  fannedOut: Set<string> = new Set(),
): Promise<MaintenancePass> {
  const { db, config } = deps;
  const until = Date.now() + PASS_BUDGET_MS;
  const pass: MaintenancePass = {
    events: 0,
    sessions: 0,
    replays: 0,
    audit: 0,
    listeners: 0,
    created: 0,
    dropped: 0,
    held: [],
    done: false,
    last: resumeAfter,
  };
  const housekept = await claimed(deps, (tx) =>
    removeExpired(tx, config.retentionMs, BATCH, config.auditRetentionMs),
  );
  if (!housekept) return pass;
  Object.assign(pass, housekept);
  // Not in the way of the partitions' work: a failure here waits for the next pass.
  pass.listeners = await endListeners(deps).catch((err) => {
    deps.dbOutage.passFailed(err, "herald listen endpoints not ended this pass");
    return 0;
  });

  const now = Date.now();
  const ahead = Math.max(2 * config.partitionIntervalMs, 3 * config.maintenanceIntervalMs);
  // The log's lock not had in time (lockLog): this step waits for the next pass, the rest goes on.
  const created = await claimed(deps, (tx) => createRanges(tx, now, config.partitionIntervalMs, ahead)).catch(
    unlessLockTimeout([] as string[]),
  );
  if (!created) return pass;
  pass.created = created.length;

  const accounts = await accountsByRetention(deps);
  const horizonMs = Math.max(config.retentionMs, ...accounts.map((a) => a.retentionMs));
  const partitions = await logPartitions(db);
  // Ranges past the retention that cannot go yet: their other events go by row meanwhile.
  const held: string[] = [];
  for (const range of rangesBefore(partitions, idFloor("event", now - horizonMs))) {
    if (Date.now() > until) return pass;
    const hold = await rangeHeld(db, range.suffix, fannedOut);
    if (hold === "gone") continue;
    if (hold) {
      held.push(range.suffix);
      pass.held.push({ partition: range.suffix, reason: hold });
      continue;
    }
    const dropped = await claimed(deps, (tx) => dropRange(tx, range.suffix)).catch(
      unlessLockTimeout("busy" as const),
    );
    if (dropped === null) return pass;
    // The log was too busy to lock in time: the next pass tries again.
    if (dropped === "busy") break;
    if (dropped) {
      pass.dropped++;
      fannedOut.delete(range.suffix);
    } else held.push(range.suffix);
  }

  // The catch-all partitions still there that hold rows, and the held ranges: each account's
  // expired events in them.
  const left = await logPartitions(db);
  const catchAlls: ExpireScope["partition"][] = [];
  for (const partition of ["legacy", "default"]) {
    if (!left.some((p) => p.suffix === partition)) continue;
    const { rows } = await db.query(`SELECT 1 FROM events_${partition} LIMIT 1`);
    if (rows.length) catchAlls.push(partition);
  }
  catchAlls.push(...held.filter((suffix) => left.some((p) => p.suffix === suffix)));
  // Those after the last pass's last turn first: no account waits behind the same ones each pass.
  let waiting = [
    ...accounts.filter((a) => resumeAfter !== null && a.id > resumeAfter),
    ...accounts.filter((a) => resumeAfter === null || a.id <= resumeAfter),
  ];
  while (waiting.length) {
    const next: typeof waiting = [];
    for (const account of waiting) {
      const scopes = scopesOf(account, now, horizonMs, catchAlls);
      if (!scopes.length) continue;
      if (Date.now() > until) return pass;
      const turn = await claimed(deps, (tx) => expireTurn(tx, scopes));
      if (!turn) return pass;
      pass.events += turn.events;
      pass.last = account.id;
      if (turn.more) next.push(account);
    }
    waiting = next;
  }
  return { ...pass, done: pass.sessions < BATCH && pass.replays < BATCH && pass.audit < BATCH, last: null };
}

export function startMaintenance(deps: DispatcherDeps): () => Promise<void> {
  let resumeAfter: string | null = null;
  // A range held by events whose fan-out has not come is said once: their messages are late
  // past the retention (an outage, a dead-lettered message), and on-call should know.
  const told = new Set<string>();
  const fannedOut = new Set<string>();
  // The first pass at once: the log's partitions for the coming days are made before events come.
  return repeat(
    deps.config.maintenanceIntervalMs,
    async () => {
      try {
        const pass = await maintainOnce(deps, resumeAfter, fannedOut);
        resumeAfter = pass.last;
        if (pass.events || pass.sessions || pass.replays || pass.audit || pass.dropped) {
          deps.metrics.expired.inc(pass.events);
          deps.logger.info(
            {
              events: pass.events,
              partitionsDropped: pass.dropped,
              sessions: pass.sessions,
              replays: pass.replays,
              audit: pass.audit,
              more: !pass.done,
            },
            "retention: expired rows removed",
          );
        }
        deps.metrics.partitionsDropped.inc(pass.dropped);
        for (const { partition, reason } of pass.held) {
          if (reason !== "events not fanned out" || told.has(partition)) continue;
          told.add(partition);
          deps.logger.warn(
            { partition, reason },
            "retention: a partition past the retention is kept: events in it were never fanned out",
          );
        }
        if (pass.created) deps.logger.info({ partitions: pass.created }, "retention: partitions made ahead");
      } catch (err) {
        deps.dbOutage.passFailed(err, "maintenance pass failed; will retry");
      }
    },
    0,
  );
}
