import { idFloor } from "@herald/db/ids";
import {
  createRanges,
  dropRange,
  type LogPartition,
  logPartitions,
  planRanges,
  rangeHeld,
  rangeSuffix,
  rangesBefore,
} from "@herald/db/lifecycle";
import { inTransaction } from "@herald/db/pool";
import { describe, expect, it } from "vitest";
import { accountWithEndpoint } from "../support/appRows.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** An event id made at `ms`: its time part, then `n` where the random part would be. */
const idAt = (ms: number, n = 1) => `${idFloor("event", ms).slice(0, -6)}${String(n).padStart(6, "0")}`;
const none = async () => null;

describe("planning the log's ranges", () => {
  const now = Date.UTC(2026, 10, 24, 15, 30);
  const today = Date.UTC(2026, 10, 24);

  it("continues from the last range to two intervals ahead, on boundaries aligned to the epoch", async () => {
    const partitions: LogPartition[] = [
      { suffix: "legacy", from: null, to: idFloor("event", now - HOUR) },
      { suffix: "default", from: null, to: null },
    ];
    const plans = await planRanges(partitions, now, DAY, 2 * DAY, none);
    expect(plans).toEqual([
      {
        suffix: rangeSuffix(now - HOUR),
        from: idFloor("event", now - HOUR),
        to: idFloor("event", today + DAY),
      },
      {
        suffix: "p20261125t000000",
        from: idFloor("event", today + DAY),
        to: idFloor("event", today + 2 * DAY),
      },
      {
        suffix: "p20261126t000000",
        from: idFloor("event", today + 2 * DAY),
        to: idFloor("event", today + 3 * DAY),
      },
    ]);
    expect(rangeSuffix(now - HOUR)).toBe("p20261124t143000");
    // Made already: nothing more until the time comes.
    const made = [...partitions, ...plans.map((p) => ({ ...p }))];
    expect(await planRanges(made, now, DAY, 2 * DAY, none)).toEqual([]);
  });

  it("leaves a gap in the past to the default partition, and starts a range past the keys it holds", async () => {
    const stale: LogPartition[] = [{ suffix: "legacy", from: null, to: idFloor("event", now - 10 * DAY) }];
    const heldKey = idAt(today + 6 * HOUR);
    const plans = await planRanges(stale, now, DAY, DAY, async (from, to) =>
      heldKey >= from && heldKey < to ? heldKey : null,
    );
    expect(plans).toEqual([
      { suffix: "p20261124t000000", from: `${heldKey}0`, to: idFloor("event", today + DAY) },
      {
        suffix: "p20261125t000000",
        from: idFloor("event", today + DAY),
        to: idFloor("event", today + 2 * DAY),
      },
    ]);
  });

  it("names only ranges wholly older than a cutoff, never the default partition", () => {
    const partitions: LogPartition[] = [
      { suffix: "legacy", from: null, to: idFloor("event", today - 2 * DAY) },
      {
        suffix: "p20261123t000000",
        from: idFloor("event", today - 2 * DAY),
        to: idFloor("event", today - DAY),
      },
      { suffix: "p20261124t000000", from: idFloor("event", today - DAY), to: idFloor("event", today) },
      { suffix: "default", from: null, to: null },
    ];
    expect(rangesBefore(partitions, idFloor("event", today - DAY + HOUR)).map((p) => p.suffix)).toEqual([
      "legacy",
      "p20261123t000000",
    ]);
  });
});

const pool = poolOnOwnDatabase(3);

async function partitionOf(table: string, key: string, column = "id"): Promise<string | null> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT tableoid::regclass::text AS name FROM ${table} WHERE ${column} = $1`,
    [key],
  );
  return rows[0]?.name ?? null;
}

async function tablesOf(suffix: string): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class WHERE relname = ANY($1) ORDER BY relname`,
    [["events", "deliveries", "attempts"].map((t) => `${t}_${suffix}`)],
  );
  return rows.map((r) => r.name);
}

describe("the log's partitions in PostgreSQL", () => {
  it("are made ahead, take the rows of their range, and past the default's keys", async () => {
    const { account, app, endpoint } = await accountWithEndpoint(pool);
    const now = Date.now();
    // A row that arrived before any range was made for its time (a gateway's clock ahead).
    const early = idAt(now + 3 * HOUR);
    await pool.query(
      "INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 't', '{}')",
      [early, account, app],
    );
    expect(await partitionOf("events", early)).toBe("events_default");

    const made = await inTransaction(pool, (tx) => createRanges(tx, now, HOUR, 4 * HOUR));
    expect(made.length).toBeGreaterThanOrEqual(4);
    for (const suffix of made)
      expect(await tablesOf(suffix)).toEqual(
        ["attempts", "deliveries", "events"].map((t) => `${t}_${suffix}`),
      );
    expect(await inTransaction(pool, (tx) => createRanges(tx, now, HOUR, 4 * HOUR))).toEqual([]);
    // The early row stays where it is; the range of its hour starts after it.
    expect(await partitionOf("events", early)).toBe("events_default");
    const partitions = await logPartitions(pool);
    const itsHour = partitions.find(
      (p) => p.suffix === rangeSuffix(Math.floor((now + 3 * HOUR) / HOUR) * HOUR),
    );
    expect(itsHour?.from).toBe(`${early}0`);

    // A new event, its delivery and attempt: all three in the range of the hour they were made.
    const id = idAt(now + 1000);
    await pool.query(
      "INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 't', '{}')",
      [id, account, app],
    );
    await pool.query(
      `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status) VALUES ('dlv_1', $1, $2, $3, $4, 'succeeded')`,
      [account, app, id, endpoint],
    );
    await pool.query(
      `INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at)
       VALUES ('atmpt_1', $1, $2, 'dlv_1', $3, $4, 1, 'succeeded', 'u', now())`,
      [account, app, id, endpoint],
    );
    const suffix = partitions.find(
      (p) => p.from !== null && p.to !== null && p.from <= id && id < p.to,
    )!.suffix;
    expect(await partitionOf("events", id)).toBe(`events_${suffix}`);
    expect(await partitionOf("deliveries", id, "event_id")).toBe(`deliveries_${suffix}`);
    expect(await partitionOf("attempts", id, "event_id")).toBe(`attempts_${suffix}`);
  });

  it("are held past the retention by a delivery on its schedule, or an event not fanned out yet", async () => {
    const { account, app, endpoint } = await accountWithEndpoint(pool);
    const range = (await logPartitions(pool)).find((p) => p.suffix.startsWith("p") && p.from !== null)!;
    const id = `${range.from!.slice(0, -6)}000555`;
    await pool.query(
      "INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 't', '{}')",
      [id, account, app],
    );
    // Its message still on its way: dropping the range would lose it.
    expect(await rangeHeld(pool, range.suffix)).toBe("events not fanned out");
    await pool.query(
      `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status) VALUES ('dlv_3', $1, $2, $3, $4, 'pending')`,
      [account, app, id, endpoint],
    );
    expect(await rangeHeld(pool, range.suffix)).toBe("open deliveries");
    await pool.query("UPDATE deliveries SET status = 'failed' WHERE id = 'dlv_3'");
    expect(await rangeHeld(pool, range.suffix)).toBeNull();
    // Fanned out to no endpoint, or erased: done with, as with a delivery.
    await pool.query("DELETE FROM deliveries WHERE id = 'dlv_3'");
    await pool.query("UPDATE events SET data_erased_at = now() WHERE id = $1", [id]);
    expect(await rangeHeld(pool, range.suffix)).toBeNull();
    await pool.query("UPDATE events SET data_erased_at = NULL, fanned_out_at = now() WHERE id = $1", [id]);
    expect(await rangeHeld(pool, range.suffix)).toBeNull();
    await pool.query("DELETE FROM events WHERE id = $1", [id]);
    expect(await rangeHeld(pool, "p19700101t000000")).toBe("gone");
  });

  it("are dropped whole, three tables together, and never while a delivery in one is on its schedule", async () => {
    const { account, app, endpoint } = await accountWithEndpoint(pool);
    const partitions = await logPartitions(pool);
    const range = partitions.find((p) => p.suffix.startsWith("p") && p.from !== null)!;
    const id = `${range.from!.slice(0, -6)}000777`;
    await pool.query(
      "INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 't', '{}')",
      [id, account, app],
    );
    await pool.query(
      `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status) VALUES ('dlv_2', $1, $2, $3, $4, 'retrying')`,
      [account, app, id, endpoint],
    );
    expect(await inTransaction(pool, (tx) => dropRange(tx, range.suffix))).toBe(false);
    expect(await tablesOf(range.suffix)).toHaveLength(3);

    await pool.query("UPDATE deliveries SET status = 'succeeded' WHERE id = 'dlv_2'");
    expect(await inTransaction(pool, (tx) => dropRange(tx, range.suffix))).toBe(true);
    expect(await tablesOf(range.suffix)).toEqual([]);
    const { rows } = await pool.query(
      "SELECT 1 FROM events WHERE id = $1 UNION ALL SELECT 1 FROM deliveries WHERE event_id = $1",
      [id],
    );
    expect(rows).toEqual([]);
    // The others are still there, the default with them.
    expect((await logPartitions(pool)).map((p) => p.suffix)).toEqual(
      partitions.map((p) => p.suffix).filter((s) => s !== range.suffix),
    );
    await expect(inTransaction(pool, (tx) => dropRange(tx, "x; DROP TABLE events"))).rejects.toThrow(
      /not a partition suffix/,
    );
  });
});
