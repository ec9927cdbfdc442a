import { newId } from "@herald/db";
import { type AttemptResult, dropDeliveries, type RetryPolicy, writeResults } from "@herald/db/lifecycle";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/dispatcher/src/config.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

/**
 * The lifecycle's result recording, on a database of its own: what each result leads to, that a
 * result recorded twice changes nothing twice, that a batch's order does not decide an
 * endpoint's failure clock, and that results and a drop of the same deliveries, concurrent,
 * apply one after the other without a deadlock.
 */
const pool = poolOnOwnDatabase(8);
const account = newId("account");
const app = newId("app");
const policy: RetryPolicy = {
  nextDelay: (n) => (n < 3 ? 60_000 : null),
  disableAfterMs: 86_400_000,
  flow: loadConfig({}).flow,
};

beforeAll(async () => {
  await pool.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [account]);
  await pool.query("INSERT INTO apps (id, account_id, name) VALUES ($1, $2, 'a')", [app, account]);
});

async function endpoint(): Promise<string> {
  const id = newId("endpoint");
  await pool.query(
    "INSERT INTO endpoints (id, account_id, app_id, url, secret) VALUES ($1, $2, $3, 'https://e.example', 's')",
    [id, account, app],
  );
  return id;
}

/** A delivery with its pending attempt number `n`, as fan-out or a retry leaves it. */
async function delivery(
  endpointId: string,
  n = 1,
): Promise<{ attempt: string; delivery: string; event: string }> {
  const event = newId("event");
  const d = newId("delivery");
  const a = newId("attempt");
  await pool.query("INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 't', '{}')", [
    event,
    account,
    app,
  ]);
  await pool.query(
    `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [d, account, app, event, endpointId, n === 1 ? "pending" : "retrying", n - 1],
  );
  await pool.query(
    `INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, sent_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 'https://e.example', now(), now())`,
    [a, account, app, d, event, endpointId, n],
  );
  return { attempt: a, delivery: d, event };
}

const result = (
  d: { attempt: string; delivery: string; event: string | null },
  succeeded: boolean,
  completedAt = new Date(),
): AttemptResult => ({
  attemptId: d.attempt,
  deliveryId: d.delivery,
  eventId: d.event,
  succeeded,
  responseStatus: succeeded ? 200 : 500,
  responseBody: succeeded ? "ok" : "down",
  error: succeeded ? null : "http_error",
  durationMs: 3,
  retryAfterMs: null,
  traceId: null,
  completedAt,
  requestHeaders: { "x-a": "b" },
});

const statusOf = async (id: string) =>
  (await pool.query<{ status: string }>("SELECT status FROM deliveries WHERE id = $1", [id])).rows[0]?.status;
const clockOf = async (id: string) =>
  (await pool.query<{ f: Date | null }>("SELECT failing_since AS f FROM endpoints WHERE id = $1", [id]))
    .rows[0]!.f;

describe("recording a batch of results", () => {
  it("ends a success, schedules a retry, ends a failure out of steps, and keeps a dropped delivery dropped", async () => {
    const healthy = await endpoint();
    const failing = await endpoint();
    const ok = await delivery(healthy);
    const retry = await delivery(failing);
    const last = await delivery(failing, 3);
    const dropped = await delivery(failing);
    await pool.query("UPDATE deliveries SET status = 'dropped' WHERE id = $1", [dropped.delivery]);

    const batch = [result(ok, true), result(retry, false), result(last, false), result(dropped, false)];
    const { recorded } = await writeResults(pool, batch, policy);
    const by = new Map(recorded.map((r) => [r.deliveryId, r]));
    expect(by.get(ok.delivery)).toMatchObject({ status: "succeeded", retry: null });
    expect(by.get(ok.delivery)!.firstSuccessAfterMs).toBeGreaterThanOrEqual(0);
    expect(by.get(retry.delivery)).toMatchObject({ status: "retrying", retry: { delayMs: 60_000 } });
    expect(by.get(last.delivery)).toMatchObject({ status: "failed", retry: null });
    expect(by.get(dropped.delivery)).toMatchObject({ status: "dropped", retry: null });
    for (const [d, status] of [
      [ok, "succeeded"],
      [retry, "retrying"],
      [last, "failed"],
      [dropped, "dropped"],
    ] as const)
      expect(await statusOf(d.delivery)).toBe(status);
    const next = await pool.query("SELECT attempt_number, status FROM attempts WHERE id = $1", [
      by.get(retry.delivery)!.retry!.attemptId,
    ]);
    expect(next.rows).toEqual([{ attempt_number: 2, status: "pending" }]);
    expect(await clockOf(failing)).not.toBeNull();
    expect(await clockOf(healthy)).toBeNull();

    // The same results again, as a redelivered message brings them: nothing changes twice.
    expect((await writeResults(pool, batch, policy)).recorded).toEqual([]);
    const attempts = await pool.query("SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1", [
      retry.delivery,
    ]);
    expect(attempts.rows[0].n).toBe(2);
  });

  it("records results that do not say their event (older senders) as those that do", async () => {
    const ep = await endpoint();
    const ok = await delivery(ep);
    const retry = await delivery(ep);
    const gone = { attempt: newId("attempt"), delivery: newId("delivery"), event: null };
    const { recorded } = await writeResults(
      pool,
      [result({ ...ok, event: null }, true), result({ ...retry, event: null }, false), result(gone, true)],
      policy,
    );
    expect(recorded.map((r) => [r.deliveryId, r.eventId, r.status]).sort()).toEqual(
      [
        [ok.delivery, ok.event, "succeeded"],
        [retry.delivery, retry.event, "retrying"],
      ].sort(),
    );
    expect(await statusOf(ok.delivery)).toBe("succeeded");
    // Successes only take the other statement: the lookup serves it too.
    const alone = await delivery(ep);
    const again = await writeResults(pool, [result({ ...alone, event: null }, true)], policy);
    expect(again.recorded.map((r) => r.status)).toEqual(["succeeded"]);
  });

  it("stops an endpoint's failure clock by its latest result, whatever the order in the batch", async () => {
    const base = Date.now() - 60_000;
    const t = (s: number) => new Date(base + s * 1000);
    const recovered = await endpoint();
    const broken = await endpoint();
    const [a, b, c, d] = [
      await delivery(recovered),
      await delivery(recovered),
      await delivery(broken),
      await delivery(broken),
    ];
    await writeResults(
      pool,
      [result(a!, true, t(2)), result(b!, false, t(1)), result(c!, true, t(1)), result(d!, false, t(2))],
      policy,
    );
    expect(await clockOf(recovered)).toBeNull();
    expect((await clockOf(broken))?.getTime()).toBe(t(2).getTime());
  });

  it("ends an endpoint's run of unreachable attempts by a success without a status, in a batch with failures too", async () => {
    // A destination beyond HTTP (a queue, a stream): it succeeds with no status at all.
    const dest = await endpoint();
    const other = await endpoint();
    const base = Date.now() - 60_000;
    const at = (s: number) => new Date(base + s * 1000);
    const unreachable = async (s: number) => ({
      ...result(await delivery(dest), false, at(s)),
      responseStatus: null,
      responseBody: null,
      error: "connection_error",
    });
    for (let s = 1; s <= 4; s++) await writeResults(pool, [await unreachable(s)], policy);
    // The acknowledgement beside another endpoint's failure: the batch's transaction with failures.
    const acknowledged = { ...result(await delivery(dest), true, at(5)), responseStatus: null };
    await writeResults(pool, [acknowledged, result(await delivery(other), false, at(5))], policy);
    for (let s = 6; s <= 9; s++) await writeResults(pool, [await unreachable(s)], policy);
    // A run of four since the answer, under the five that open the breaker.
    const flow = await pool.query(
      "SELECT failures, pause_reason FROM endpoint_flows WHERE endpoint_id = $1",
      [dest],
    );
    expect(flow.rows).toEqual([{ failures: 4, pause_reason: null }]);
  });

  it("applies results and a drop of the same deliveries one after the other, without a deadlock", async () => {
    const ep = await endpoint();
    const made = [];
    for (let i = 0; i < 150; i++) made.push(await delivery(ep));
    const shuffled = [...made].sort(() => Math.random() - 0.5);
    const batches = [0, 50, 100].map((i) => shuffled.slice(i, i + 50).map((d, j) => result(d, j % 3 !== 0)));
    const outcomes = await Promise.allSettled([
      ...batches.map((b) => writeResults(pool, b, policy)),
      dropDeliveries(pool, { endpointId: ep }),
    ]);
    expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
    const { rows } = await pool.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 GROUP BY status ORDER BY status",
      [ep],
    );
    // Each ends as the one applied last left it: succeeded (a success wins over a drop), or
    // dropped; none is left open with its result recorded.
    expect(rows.every((r) => r.status === "succeeded" || r.status === "dropped")).toBe(true);
    expect(rows.reduce((n, r) => n + r.n, 0)).toBe(150);
  });

  it("commits a batch of successes without waiting for the WAL's flush, and that transaction only", async () => {
    const ep = await endpoint();
    const d = await delivery(ep);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      // The statement run inside a transaction of the test's, to read the setting it leaves.
      await writeResults(
        { query: client.query.bind(client) } as unknown as typeof pool,
        [result(d, true)],
        policy,
      );
      expect((await client.query("SHOW synchronous_commit")).rows[0].synchronous_commit).toBe("off");
      await client.query("COMMIT");
      expect((await client.query("SHOW synchronous_commit")).rows[0].synchronous_commit).toBe("on");
    } finally {
      client.release();
    }
    expect(await statusOf(d.delivery)).toBe("succeeded");
  });
});
