import { newId } from "@herald/db";
import { purgeApp } from "@herald/db/lifecycle";
import { describe, expect, it } from "vitest";
import { appRows } from "../support/appRows.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

/** An app's rows go in slices that each end in time, carried on by the next call. */
const pool = poolOnOwnDatabase(4);

/** An app with one endpoint and `n` events, each with a delivery and two attempts. */
async function appWith(n: number, deleted: boolean): Promise<string> {
  const account = newId("account");
  const app = newId("app");
  const endpoint = newId("endpoint");
  await pool.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [account]);
  await pool.query("INSERT INTO apps (id, account_id, name, deleted_at) VALUES ($1, $2, 'a', $3)", [
    app,
    account,
    deleted ? new Date() : null,
  ]);
  await pool.query(
    "INSERT INTO endpoints (id, account_id, app_id, url, secret, deleted_at) VALUES ($1, $2, $3, 'https://e.example', 's', $4)",
    [endpoint, account, app, deleted ? new Date() : null],
  );
  await pool.query(
    `WITH ev AS (
       INSERT INTO events (id, account_id, app_id, type, data)
       SELECT 'evt_' || $3 || '_' || i, $1, $2, 't', '{}' FROM generate_series(1, $5::int) i RETURNING id),
     d AS (
       INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts)
       SELECT 'dlv_' || ev.id, $1, $2, ev.id, $4, 'failed', 2 FROM ev RETURNING id, event_id)
     INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at)
     SELECT 'atmpt_' || d.id || '_' || k, $1, $2, d.id, d.event_id, $4, k, 'failed', 'u', now()
     FROM d, generate_series(1, 2) k`,
    [account, app, app.slice(4), endpoint, n],
  );
  return app;
}

describe("purging a deleted app", () => {
  it("deletes every row in slices that each stop when their time is up, and says when it is done", async () => {
    const app = await appWith(1200, true);
    const slices = [];
    // A slice already late: each call does one batch of 500, then hands back.
    for (let i = 0; i < 20; i++) {
      const slice = await purgeApp(pool, app, { until: 0 });
      if (!slice) break;
      slices.push(slice);
      if (slice.done) break;
    }
    expect(slices.length).toBeGreaterThan(3);
    expect(slices.at(-1)!.done).toBe(true);
    expect(slices.slice(0, -1).every((s) => !s.done)).toBe(true);
    expect(slices.reduce((n, s) => n + s.deliveries, 0)).toBe(1200);
    expect(await appRows(pool, app)).toBe(0);
    // Once gone, there is nothing left to do.
    expect(await purgeApp(pool, app, {})).toBeNull();
  });

  it("leaves an app that is not marked deleted alone", async () => {
    const app = await appWith(3, false);
    expect(await purgeApp(pool, app, {})).toBeNull();
    expect(await appRows(pool, app)).toBe(3 + 3 + 6 + 1 + 1);
  });
});
