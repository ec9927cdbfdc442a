import { newId } from "@herald/db";
import {
  claimStranded,
  type FlowSettings,
  recountInFlight,
  release,
  wakeForgotten,
  writeResults,
} from "@herald/db/lifecycle";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/dispatcher/src/config.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

/**
 * The release gate on a database of its own: several releases at once never let more of an
 * endpoint's attempts go than its limit; a rate-limited endpoint gets one second's worth; and
 * the sweeper's three checks: an endpoint with attempts waiting unknown to the gate is put
 * before it, a count in flight that leaked is lowered, and an attempt sent long ago with no
 * result is claimed to be sent again.
 */
const pool = poolOnOwnDatabase(12);
const account = newId("account");
const app = newId("app");
/** The dispatcher's defaults, with a small in-flight limit. */
const settings: FlowSettings = { ...loadConfig({}).flow, maxInFlight: 5 };

beforeAll(async () => {
  await pool.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [account]);
  await pool.query("INSERT INTO apps (id, account_id, name) VALUES ($1, $2, 'a')", [app, account]);
});

async function endpoint(extra: { rate_limit?: number; max_in_flight?: number } = {}): Promise<string> {
  const id = newId("endpoint");
  await pool.query(
    `INSERT INTO endpoints (id, account_id, app_id, url, secret, rate_limit, max_in_flight)
     VALUES ($1, $2, $3, 'https://e.example', 's', $4, $5)`,
    [id, account, app, extra.rate_limit ?? null, extra.max_in_flight ?? null],
  );
  await pool.query("INSERT INTO endpoint_flows (endpoint_id) VALUES ($1)", [id]);
  return id;
}

/** `n` deliveries of the endpoint, each with a first attempt waiting to be sent. */
async function waiting(endpointId: string, n: number, sentAt: Date | null = null): Promise<string[]> {
  const events = Array.from({ length: n }, () => newId("event"));
  const deliveries = events.map(() => newId("delivery"));
  const attempts = events.map(() => newId("attempt"));
  await pool.query(
    `WITH x AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS x(e, d, a)),
     ev AS (INSERT INTO events (id, account_id, app_id, type, data) SELECT e, $4, $5, 't', '{}' FROM x),
     dl AS (INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts)
            SELECT d, $4, $5, e, $6, 'pending', 0 FROM x)
     INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, sent_at)
     SELECT a, $4, $5, d, e, $6, 1, 'pending', 'https://e.example', now() - interval '1 minute', $7 FROM x`,
    [events, deliveries, attempts, account, app, endpointId, sentAt],
  );
  return attempts;
}

const inFlight = async (endpointId: string) =>
  (await pool.query("SELECT in_flight FROM endpoint_flows WHERE endpoint_id = $1", [endpointId])).rows[0]
    .in_flight as number;

describe("the release gate", () => {
  it("lets no more than max_in_flight go, however many releases run at once", async () => {
    const ep = await endpoint();
    await waiting(ep, 40);
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        release(pool, i % 2 ? { endpoints: [ep] } : { poll: 10 }, settings).catch((err) => err as Error),
      ),
    );
    const sent = runs.flatMap((r) => (r instanceof Error ? [] : r.send.map((a) => a.id)));
    expect(runs.filter((r) => r instanceof Error)).toEqual([]);
    expect(sent).toHaveLength(settings.maxInFlight);
    expect(new Set(sent).size).toBe(settings.maxInFlight);
    expect(await inFlight(ep)).toBe(settings.maxInFlight);
    const { rows } = await pool.query(
      "SELECT held_by, next_release_at IS NOT NULL AS waiting FROM endpoint_flows WHERE endpoint_id = $1",
      [ep],
    );
    expect(rows[0]).toEqual({ held_by: "max_in_flight", waiting: true });
  });

  it("takes an endpoint's own max_in_flight when lower than the default, never when higher", async () => {
    const [lower, higher, limitedHigher] = [
      await endpoint({ max_in_flight: 2 }),
      await endpoint({ max_in_flight: 1000 }),
      // With a rate limit: the full gate's path, not the one-statement one.
      await endpoint({ max_in_flight: 1000, rate_limit: 100 }),
    ];
    for (const ep of [lower, higher, limitedHigher]) await waiting(ep, 20);
    const sent = await release(pool, { endpoints: [lower, higher, limitedHigher] }, settings);
    const of = (ep: string) => sent.send.filter((a) => a.endpoint_id === ep).length;
    expect([of(lower), of(higher), of(limitedHigher)]).toEqual([
      2,
      settings.maxInFlight,
      settings.maxInFlight,
    ]);
    const polled = await release(pool, { poll: 10 }, settings);
    expect(polled.send.filter((a) => [lower, higher, limitedHigher].includes(a.endpoint_id))).toEqual([]);
    for (const ep of [higher, limitedHigher]) expect(await inFlight(ep)).toBe(settings.maxInFlight);
  });

  it("gives a rate-limited endpoint one second's worth, then holds the rest for the next token", async () => {
    const ep = await endpoint({ rate_limit: 3 });
    await waiting(ep, 10);
    const first = await release(pool, { endpoints: [ep] }, { ...settings, maxInFlight: 100 });
    expect(first.send).toHaveLength(3);
    expect(first.held).toEqual([{ endpointId: ep, heldBy: "rate_limit" }]);
    const again = await release(pool, { endpoints: [ep] }, { ...settings, maxInFlight: 100 });
    expect(again.send).toHaveLength(0);
  });
});

describe("the sweeper's checks", () => {
  it("puts an endpoint with attempts waiting unknown to the gate before it", async () => {
    const ep = await endpoint();
    await waiting(ep, 2);
    expect(await wakeForgotten(pool, new Date(Date.now() - 10_000))).toBeGreaterThanOrEqual(1);
    const { rows } = await pool.query("SELECT next_release_at FROM endpoint_flows WHERE endpoint_id = $1", [
      ep,
    ]);
    expect(rows[0].next_release_at).not.toBeNull();
    const r = await release(pool, { poll: 100 }, settings);
    expect(r.send.filter((a) => a.endpoint_id === ep)).toHaveLength(2);
  });

  it("keeps the count right when a recount comes while successes are being recorded", async () => {
    const ep = await endpoint();
    await waiting(ep, 3);
    expect((await release(pool, { endpoints: [ep] }, settings)).send).toHaveLength(3);
    const { rows: two } = await pool.query<{ id: string; delivery_id: string; event_id: string }>(
      "SELECT id, delivery_id, event_id FROM attempts WHERE endpoint_id = $1 ORDER BY id LIMIT 2",
      [ep],
    );
    // The recount (another dispatcher's sweeper) holds the flow first.
    const recount = await pool.connect();
    try {
      await recount.query("BEGIN");
      await recount.query("SELECT 1 FROM endpoint_flows WHERE endpoint_id = $1 FOR NO KEY UPDATE", [ep]);
      const recording = writeResults(
        pool,
        two.map((a) => ({
          attemptId: a.id,
          deliveryId: a.delivery_id,
          eventId: a.event_id,
          succeeded: true,
          responseStatus: 200,
          responseBody: "ok",
          error: null,
          durationMs: 5,
          retryAfterMs: null,
          traceId: null,
          completedAt: new Date(),
          requestHeaders: null,
        })),
        { nextDelay: () => null, disableAfterMs: 86_400_000, flow: settings },
      );
      // Recording waits on the flow's lock...
      await expect
        .poll(async () => {
          const { rows } = await pool.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          return rows[0].n;
        })
        .toBeGreaterThan(0);
      // ...while the recount counts what is in flight, as recountInFlight does, and commits.
      await recount.query(
        `UPDATE endpoint_flows f SET in_flight = c.n FROM (
           SELECT count(*)::int AS n FROM attempts WHERE endpoint_id = $1 AND status = 'pending' AND sent_at IS NOT NULL) c
         WHERE f.endpoint_id = $1 AND c.n < f.in_flight`,
        [ep],
      );
      await recount.query("COMMIT");
      expect((await recording).recorded).toHaveLength(2);
    } finally {
      recount.release();
    }
    // One attempt is still out: counted once, not taken off twice.
    expect(await inFlight(ep)).toBe(1);
  });

  it("lowers a count in flight that leaked, and claims attempts sent long ago with no result", async () => {
    const ep = await endpoint();
    const [stranded] = await waiting(ep, 1, new Date(Date.now() - 3_600_000));
    await pool.query("UPDATE endpoint_flows SET in_flight = 4 WHERE endpoint_id = $1", [ep]);
    await recountInFlight(pool);
    expect(await inFlight(ep)).toBe(1);
    const claimed = await claimStranded(pool, { sentBefore: new Date(Date.now() - 60_000), limit: 10 });
    expect(claimed).toContain(stranded);
    // Claimed means sent now: the next sweep leaves it alone for a deadline.
    expect(await claimStranded(pool, { sentBefore: new Date(Date.now() - 60_000), limit: 10 })).not.toContain(
      stranded,
    );
  });
});
