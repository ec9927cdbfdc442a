import { newId } from "@herald/db";
import { expireEvents, removeExpired } from "@herald/db/lifecycle";
import { inTransaction } from "@herald/db/pool";
import { describe, expect, it } from "vitest";
import { accountWithEndpoint } from "../support/appRows.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

const pool = poolOnOwnDatabase(2);

describe("expiring an account's events", () => {
  it("takes only events done with: fanned out, and with no delivery pending or retrying", async () => {
    const { account, app, endpoint } = await accountWithEndpoint(pool);
    const event = async (fannedOut: boolean, delivery: string | null) => {
      const id = newId("event");
      await pool.query(
        `INSERT INTO events (id, account_id, app_id, type, data, fanned_out_at) VALUES ($1, $2, $3, 't', '{}', $4)`,
        [id, account, app, fannedOut ? new Date() : null],
      );
      if (delivery)
        await pool.query(
          `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status) VALUES ($1, $2, $3, $4, $5, $6)`,
          [newId("delivery"), account, app, id, endpoint, delivery],
        );
      return id;
    };
    const notYetFannedOut = await event(false, null);
    const untargeted = await event(true, null);
    const succeeded = await event(false, "succeeded");
    const retrying = await event(false, "retrying");
    const cutoff = new Date(Date.now() + 1);
    await new Promise((r) => setTimeout(r, 5));
    const newer = await event(false, "succeeded");

    const expire = (olderThan: Date) =>
      inTransaction(pool, (tx) =>
        expireEvents(tx, { accountId: account, olderThan, notBefore: null, partition: null }, 2),
      );
    const first = await expire(cutoff);
    expect(first).toEqual({ events: 2, more: true });
    while ((await expire(cutoff)).more);
    const { rows } = await pool.query<{ id: string }>("SELECT id FROM events ORDER BY id");
    expect(rows.map((r) => r.id)).toEqual([notYetFannedOut, retrying, newer]);
    expect([untargeted, succeeded].every((id) => !rows.some((r) => r.id === id))).toBe(true);
    // A retention longer than the epoch expires nothing, rather than everything.
    expect(await expire(new Date(-1))).toEqual({ events: 0, more: false });
  });
});

describe("the audit log's retention", () => {
  it("keeps records as long as the account's events, or AUDIT_RETENTION when that is longer", async () => {
    const { account } = await accountWithEndpoint(pool);
    const { account: keepsLonger } = await accountWithEndpoint(pool);
    await pool.query("UPDATE accounts SET retention_seconds = 3600 WHERE id = $1", [keepsLonger]);
    const record = async (accountId: string, ageSeconds: number) => {
      const id = newId("auditRecord");
      await pool.query(
        `INSERT INTO audit_log (id, account_id, actor_type, actor_id, action, object_type, created_at)
         VALUES ($1, $2, 'api_key', 'key_x', 'app.created', 'app', now() - make_interval(secs => $3))`,
        [id, accountId, ageSeconds],
      );
      return id;
    };
    const left = async (ids: string[]) =>
      (
        await pool.query<{ id: string }>("SELECT id FROM audit_log WHERE id = ANY($1) ORDER BY id", [ids])
      ).rows.map((r) => r.id);
    // A default retention of 60 s: a 2-minute-old record goes, unless the account keeps an hour.
    const old = await record(account, 120);
    const recent = await record(account, 10);
    const oldOfLonger = await record(keepsLonger, 120);
    const ancient = await record(keepsLonger, 7200);
    await removeExpired(pool, 60_000, 100);
    expect(await left([old, recent, oldOfLonger, ancient])).toEqual([recent, oldOfLonger].sort());
    // AUDIT_RETENTION of 3 hours: longer than both, so the 2-hour-old record stays with it.
    const again = await record(keepsLonger, 7200);
    const older = await record(account, 4 * 3600);
    await removeExpired(pool, 60_000, 100, 3 * 3_600_000);
    expect(await left([again, older])).toEqual([again]);
  });
});
