import pg from "pg";
import { idFloor, idTime } from "../ids.ts";
import type { PoolClient, Queryable } from "../pool.ts";

/**
 * The delivery log's partitions (migration 0016). Events are ranged on `id`, deliveries and
 * attempts on `event_id`, with the same bounds: each range is three tables of one suffix
 * (`events_p20261124t000000`, `deliveries_p…`, `attempts_p…`), made together and dropped
 * together. Besides the ranges made here there are `_legacy` (what the tables held before they
 * were partitioned, up to the migration) and `_default` (keys outside every range: rows that
 * arrived before a range was made for them). Those two are emptied by the row purge
 * (expire.ts); a range is dropped whole once it is older than the longest retention.
 */
const LOG_TABLES = ["events", "deliveries", "attempts"] as const;

export type LogPartition = {
  /** The suffix the three tables share: `p20261124t000000`, `legacy`, `default`. */
  suffix: string;
  /** Lowest key, inclusive; null from MINVALUE or for the default partition. */
  from: string | null;
  /** Highest key, exclusive; null for the default partition. */
  to: string | null;
};

/**
 * The bytes of the log on disk: its tables with their indexes and TOAST, over every partition,
 * from PostgreSQL's own size functions.
 */
export async function logBytes(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ bytes: string | null }>(
    `SELECT sum(pg_total_relation_size(t.relid)) AS bytes
     FROM unnest($1::text[]) AS r(name), LATERAL pg_partition_tree(r.name::regclass) t WHERE t.isleaf`,
    [[...LOG_TABLES]],
  );
  return Number(rows[0]?.bytes ?? 0);
}

const BOUND = /^FOR VALUES FROM \((?:'([^']*)'|MINVALUE)\) TO \('([^']*)'\)$/;

/** The events table's partitions, the default last, the ranges in key order. */
export async function logPartitions(db: Queryable): Promise<LogPartition[]> {
  const { rows } = await db.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'events'::regclass`,
  );
  const partitions = rows.map(({ name, bound }) => {
    const suffix = name.slice("events_".length);
    if (bound === "DEFAULT") return { suffix, from: null, to: null };
    const m = BOUND.exec(bound);
    if (!m) throw new Error(`unexpected bound of ${name}: ${bound}`);
    return { suffix, from: m[1] ?? null, to: m[2]! };
  });
  const key = (p: LogPartition) => p.to ?? "\uffff";
  return partitions.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The name of a range starting at `ms`: `p20261124t000000` (milliseconds only when not zero). */
export function rangeSuffix(ms: number): string {
  const iso = new Date(ms).toISOString();
  const [date, time] = iso.slice(0, -1).split("T") as [string, string];
  const [clock, millis] = time.split(".") as [string, string];
  return `p${date.replaceAll("-", "")}t${clock.replaceAll(":", "")}${millis === "000" ? "" : `_${millis}`}`;
}

export type RangePlan = { suffix: string; from: string; to: string };

/**
 * The ranges to make so that keys from now to `now + aheadMs` have a partition, each one
 * `intervalMs` long on boundaries aligned to the epoch. They continue from the last range's end;
 * when that is in the past (maintenance did not run for a while) they start at the boundary
 * before now, and keys in the gap stay in the default partition. Pure: `defaultMax` tells the
 * highest default-partition key inside a range, which the range must start after.
 */
export async function planRanges(
  partitions: LogPartition[],
  now: number,
  intervalMs: number,
  aheadMs: number,
  defaultMax: (from: string, to: string) => Promise<string | null>,
): Promise<RangePlan[]> {
  const align = (ms: number) => Math.floor(ms / intervalMs) * intervalMs;
  const last = partitions.filter((p) => p.to !== null).at(-1)?.to ?? null;
  let fromMs = last === null ? align(now) : idTime(last);
  let from = last ?? idFloor("event", fromMs);
  if (fromMs < align(now)) {
    fromMs = align(now);
    from = idFloor("event", fromMs);
  }
  const plans: RangePlan[] = [];
  while (fromMs < now + aheadMs) {
    const toMs = align(fromMs) + intervalMs;
    const to = idFloor("event", toMs);
    const highest = await defaultMax(from, to);
    // Past any key already in the default partition: attaching a range it holds keys of fails.
    const start = highest === null ? from : `${highest}0`;
    if (start < to) plans.push({ suffix: rangeSuffix(fromMs), from: start, to });
    fromMs = toMs;
    from = to;
  }
  return plans;
}

/** The highest key of the three default partitions in [from, to); null when none. */
async function defaultMax(tx: Queryable, from: string, to: string): Promise<string | null> {
  const { rows } = await tx.query<{ max: string | null }>(
    `SELECT GREATEST(
       (SELECT max(id) FROM events_default WHERE id >= $1 AND id < $2),
       (SELECT max(event_id) FROM deliveries_default WHERE event_id >= $1 AND event_id < $2),
       (SELECT max(event_id) FROM attempts_default WHERE event_id >= $1 AND event_id < $2)) AS max`,
    [from, to],
  );
  return rows[0]?.max ?? null;
}

/**
 * The lock that making or dropping a range needs: the log's three tables, exclusively, in one
 * statement, so that no wait starts while a lock is held from an earlier one. In a deadlock with
 * a statement of the log this transaction then always waited first, and its `lock_timeout`
 * (shorter than PostgreSQL's `deadlock_timeout`, 1 s) gives up before the other is chosen as the
 * victim; the step that gave up waits for the next maintenance pass. While they are held, no
 * statement holds any of their partitions: dropping or attaching one then waits for nothing.
 */
async function lockLog(tx: PoolClient): Promise<void> {
  await tx.query("SET LOCAL lock_timeout = '200ms'");
  await tx.query("LOCK TABLE ONLY events, ONLY deliveries, ONLY attempts IN ACCESS EXCLUSIVE MODE");
}

/**
 * Makes the ranges that keys up to `now + aheadMs` need, in the caller's transaction; returns
 * their suffixes. The log's three tables are locked first, as for a drop: attaching a range under
 * a weaker lock lets an insert that started before it route its row to the default partition,
 * which then refuses it (23514, the row now belongs to the new range). The pause is a few
 * milliseconds a range (empty tables, their indexes made empty), once an interval.
 */
export async function createRanges(
  tx: PoolClient,
  now: number,
  intervalMs: number,
  aheadMs: number,
): Promise<string[]> {
  const plans = await planRanges(await logPartitions(tx), now, intervalMs, aheadMs, (from, to) =>
    defaultMax(tx, from, to),
  );
  if (!plans.length) return [];
  await lockLog(tx);
  // Rows may have reached the default partitions since the plan: planned again under the lock.
  const sure = await planRanges(await logPartitions(tx), now, intervalMs, aheadMs, (from, to) =>
    defaultMax(tx, from, to),
  );
  for (const plan of sure) {
    for (const table of LOG_TABLES) {
      const name = `${table}_${plan.suffix}`;
      await tx.query(`CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      await tx.query(
        `ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${pg.escapeLiteral(plan.from)}) TO (${pg.escapeLiteral(plan.to)})`,
      );
    }
  }
  return sure.map((p) => p.suffix);
}

/** Ranges whose every key is below `before`: those retention may drop, oldest first. */
export function rangesBefore(partitions: LogPartition[], before: string): LogPartition[] {
  return partitions.filter((p) => p.suffix !== "default" && p.to !== null && p.to <= before);
}

/**
 * Drops one range (its three tables) in the caller's transaction, unless a delivery in it is
 * still `pending` or `retrying`: then it is kept, and dropped by a later pass once that delivery
 * ends. Under the log's lock (lockLog); the caller checked first that `rangeHeld` finds nothing
 * else. Returns whether it went.
 */
export async function dropRange(tx: PoolClient, suffix: string): Promise<boolean> {
  partitionSuffix(suffix);
  await lockLog(tx);
  if (await hasOpenDeliveries(tx, suffix)) return false;
  await tx.query(`DROP TABLE attempts_${suffix}, deliveries_${suffix}, events_${suffix}`);
  return true;
}

/** Whether a delivery in the range is `pending` or `retrying` (the open deliveries' index). */
async function hasOpenDeliveries(db: Queryable, suffix: string): Promise<boolean> {
  const { rows } = await db.query<{ open: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM deliveries_${partitionSuffix(suffix)} WHERE status IN ('pending', 'retrying')) AS open`,
  );
  return rows[0]?.open ?? false;
}

/** Why a range past the retention is kept: see `rangeHeld`. */
export type Hold = "open deliveries" | "events not fanned out" | "gone";

/**
 * Why a range past the retention cannot be dropped yet, or null when it can (without locks:
 * `dropRange` checks the deliveries again under them):
 * - a delivery in it is still `pending` or `retrying` (the open deliveries' partial index tells
 *   at once);
 * - an event in it has not been fanned out: no delivery, not marked by fan-out, not erased, its
 *   app not deleted. Its message is still on its way (an outage, a dead-lettered message), and
 *   dropping the range would lose it. This reads the range's events. No new event can appear in
 *   a range that old (ids are made at acceptance), so once none is found it stays so: the range
 *   goes into `fannedOut` and is not read again (a drop the log was too busy for is tried at
 *   the next pass without it);
 * - it is no longer there (another dispatcher's pass dropped it since it was listed).
 */
export async function rangeHeld(
  db: Queryable,
  suffix: string,
  fannedOut: Set<string> = new Set(),
): Promise<Hold | null> {
  const name = partitionSuffix(suffix);
  try {
    if (await hasOpenDeliveries(db, name)) return "open deliveries";
    if (fannedOut.has(name)) return null;
    const { rows: waiting } = await db.query(
      `SELECT 1 FROM events_${name} ev JOIN apps ON apps.id = ev.app_id AND apps.deleted_at IS NULL
       WHERE ev.fanned_out_at IS NULL AND ev.data_erased_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM deliveries_${name} d WHERE d.event_id = ev.id)
       LIMIT 1`,
    );
    if (waiting.length) return "events not fanned out";
    fannedOut.add(name);
    return null;
  } catch (err) {
    if ((err as { code?: string }).code === "42P01") return "gone"; // undefined_table
    throw err;
  }
}

/** A partition's suffix, checked before it goes into a statement's table name. */
export function partitionSuffix(suffix: string): string {
  if (!/^[a-z0-9_]+$/.test(suffix)) throw new Error(`not a partition suffix: ${suffix}`);
  return suffix;
}
