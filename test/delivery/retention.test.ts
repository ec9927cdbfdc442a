import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { ADMIN_TOKEN } from "../support/gateway.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// A retention of 3 s, looked at twice a second, the log in partitions of 1 s; a failing
// delivery's one retry comes 5 s on, past the retention, so an event outlives its retention
// while it is retried. A pool of one connection: the maintenance pass must never wait on itself.
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
let db: pg.Pool;

beforeAll(async () => {
  sys = await startSystem({
    RETENTION: "3s",
    PARTITION_INTERVAL: "1s",
    MAINTENANCE_INTERVAL: "500ms",
    RETRY_SCHEDULE: "5s",
    DATABASE_POOL_SIZE: "1",
  });
  receiver = await startReceiver();
  await setupApp(sys, ["order.paid"]);
  f = fixtures(sys, receiver);
  db = new pg.Pool({ connectionString: sys.databaseUrl, max: 2 });
});
afterAll(async () => {
  await db.end();
  await sys.close();
  await receiver.close();
});

const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, key: null };

/** The event's rows in each table. */
async function rowsOf(eventId: string): Promise<{ events: number; deliveries: number; attempts: number }> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*)::int FROM events WHERE id = $1) AS events,
            (SELECT count(*)::int FROM deliveries WHERE event_id = $1) AS deliveries,
            (SELECT count(*)::int FROM attempts WHERE event_id = $1) AS attempts`,
    [eventId],
  );
  return rows[0];
}

/** The partition of the events table an event is in. */
async function partitionOf(eventId: string): Promise<string> {
  const { rows } = await db.query("SELECT tableoid::regclass::text AS name FROM events WHERE id = $1", [
    eventId,
  ]);
  return rows[0].name;
}

async function exists(table: string): Promise<boolean> {
  return (await db.query("SELECT to_regclass($1) IS NOT NULL AS found", [table])).rows[0].found;
}

const found = async (eventId: string, key?: string) =>
  (await sys.request("GET", `/v3/events/${eventId}`, key ? { key } : {})).status;

describe("retention", () => {
  it("drops the partitions past it with their deliveries and attempts, keeps newer ones, and waits for a retry", async () => {
    // The flaky endpoint fails its event's first attempt only.
    let flakyEvent = "";
    let failed = false;
    receiver.on("/ok", { status: 200 });
    receiver.on("/flaky", (req) => {
      if (req.headers["webhook-id"] !== flakyEvent || failed) return { status: 200 };
      failed = true;
      return { status: 500 };
    });
    const ok = await f.endpoint("/ok");
    const flaky = await f.endpoint("/flaky");
    const old = await f.send("order.paid");
    // Just past the next second's start: the next partition, with most of a second for two events
    // to share it (partitions start on whole seconds of the one clock this machine has).
    await new Promise((r) => setTimeout(r, 1020 - (Date.now() % 1000)));
    flakyEvent = await f.send("order.paid");
    const neighbour = await f.send("order.paid");
    await expect.poll(() => f.status(old, ok), { timeout: 10_000 }).toBe("succeeded");
    await expect.poll(() => f.status(flakyEvent, flaky), { timeout: 10_000 }).toBe("retrying");
    expect(await rowsOf(old)).toEqual({ events: 1, deliveries: 2, attempts: 2 });
    // Made ahead by the maintenance pass, not the catch-all.
    const partition = await partitionOf(old);
    expect(partition).toMatch(/^events_p\d{8}t\d{6}/);
    const flakyPartition = await partitionOf(flakyEvent);
    expect(flakyPartition).not.toBe(partition);
    expect(await partitionOf(neighbour)).toBe(flakyPartition);

    await expect.poll(() => found(old), { timeout: 10_000, interval: 250 }).toBe(404);
    expect(await rowsOf(old)).toEqual({ events: 0, deliveries: 0, attempts: 0 });
    const suffix = partition.slice("events_".length);
    for (const table of ["events", "deliveries", "attempts"])
      expect(await exists(`${table}_${suffix}`)).toBe(false);
    // Past its retention and a pass more, but its retry is due only 5 s after its first attempt:
    // kept whole until the retry ends.
    const flakyAt = Date.parse((await sys.request("GET", `/v3/events/${flakyEvent}`)).body.created_at);
    await new Promise((r) => setTimeout(r, Math.max(0, flakyAt + 4000 - Date.now())));
    expect(await f.status(flakyEvent, flaky)).toBe("retrying");
    expect(await rowsOf(flakyEvent)).toEqual({ events: 1, deliveries: 2, attempts: 3 });
    expect(await exists(flakyPartition)).toBe(true);
    // The partition is held, but not its other events: they go by row at their retention.
    await expect.poll(() => found(neighbour), { timeout: 2_000, interval: 100 }).toBe(404);
    expect(await rowsOf(neighbour)).toEqual({ events: 0, deliveries: 0, attempts: 0 });
    expect(await exists(flakyPartition)).toBe(true);
    expect(await f.status(flakyEvent, flaky)).toBe("retrying");
    const young = await f.send("order.paid");
    expect(await found(young)).toBe(200);

    // Its retry succeeds, and the next pass removes it.
    await expect.poll(() => found(flakyEvent), { timeout: 15_000, interval: 250 }).toBe(404);
    expect(await rowsOf(flakyEvent)).toEqual({ events: 0, deliveries: 0, attempts: 0 });
    // The pass that found it done may have taken it by row; the partition, empty, goes by the next.
    await expect.poll(() => exists(flakyPartition), { timeout: 10_000, interval: 250 }).toBe(false);
    expect(receiver.received("/flaky").filter((r) => r.headers["webhook-id"] === flakyEvent)).toHaveLength(2);
  }, 40_000);

  it("keeps an account's events for the retention the operator set it", async () => {
    const key = await sys.newAccount("Keeps longer");
    const { body: me } = await sys.request("GET", "/v3/apps", { key });
    expect(me.data).toEqual([]);
    const accounts = (await sys.request("GET", "/admin/accounts?limit=100", admin)).body.data;
    const account = accounts.find((a: { name: string }) => a.name === "Keeps longer");
    expect(account.retention_seconds).toBeNull();
    const set = await sys.request("POST", `/admin/accounts/${account.id}`, {
      ...admin,
      json: { retention_seconds: 3600 },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ id: account.id, retention_seconds: 3600 });
    expect((await sys.request("GET", `/admin/accounts/${account.id}`, admin)).body.retention_seconds).toBe(
      3600,
    );

    await sys.request("POST", "/v3/apps", { key, json: { uid: "long", name: "Long" } });
    await sys.request("POST", "/v3/event-types", { key, json: { name: "order.paid" } });
    const kept = (
      await sys.request("POST", "/v3/events", { key, json: { app: "long", type: "order.paid", data: {} } })
    ).body.id;
    const gone = await f.send("order.paid");
    await expect.poll(() => found(gone), { timeout: 10_000, interval: 250 }).toBe(404);
    expect(await found(kept, key)).toBe(200);

    // Back to the default: the next pass takes it.
    await sys.request("POST", `/admin/accounts/${account.id}`, {
      ...admin,
      json: { retention_seconds: null },
    });
    await expect.poll(() => found(kept, key), { timeout: 10_000, interval: 250 }).toBe(404);
  }, 30_000);

  it("removes expired sessions and replays completed before the retention", async () => {
    const { rows } = await db.query<{ id: string }>("SELECT id FROM accounts ORDER BY id LIMIT 1");
    const account = rows[0]!.id;
    const endpoint = await f.endpoint("/ok");
    await db.query(
      `INSERT INTO sessions (id, account_id, kind, token_hash, expires_at) VALUES
         ('ses_expired', $1, 'dashboard', 'h1', now() - interval '1 second'),
         ('ses_current', $1, 'dashboard', 'h2', now() + interval '1 hour')`,
      [account],
    );
    await db.query(
      `INSERT INTO replays (id, account_id, endpoint_id, status, queued, completed_at) VALUES
         ('rpl_old', $1, $2, 'completed', 0, now() - interval '1 minute'),
         ('rpl_running', $1, $2, 'running', 0, NULL)`,
      [account, endpoint],
    );
    const ids = async (table: string) =>
      (await db.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r) => r.id);
    await expect.poll(() => ids("replays"), { timeout: 10_000 }).not.toContain("rpl_old");
    expect(await ids("replays")).toContain("rpl_running");
    expect(await ids("sessions")).not.toContain("ses_expired");
    expect(await ids("sessions")).toContain("ses_current");
  });
});

describe("the operator's account routes", () => {
  it("refuse a retention that is not a positive whole number of seconds, and an unknown account", async () => {
    const { body } = await sys.request("GET", "/admin/accounts?limit=1", admin);
    const id = body.data[0].id;
    for (const retention_seconds of [0, -5, 1.5, "7d"]) {
      const res = await sys.request("POST", `/admin/accounts/${id}`, {
        ...admin,
        json: { retention_seconds },
      });
      expect(res.status, JSON.stringify(retention_seconds)).toBe(400);
      expect(res.body.error.param).toBe("retention_seconds");
    }
    expect((await sys.request("GET", "/admin/accounts/acct_nope", admin)).status).toBe(404);
    expect(
      (await sys.request("POST", `/admin/accounts/${id}`, { json: { retention_seconds: 60 } })).status,
    ).toBe(401);
  });
});
