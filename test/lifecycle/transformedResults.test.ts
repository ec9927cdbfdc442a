import { newId } from "@herald/db";
import { type AttemptResult, previewReplay, type RetryPolicy, writeResults } from "@herald/db/lifecycle";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/dispatcher/src/config.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

/**
 * Results of attempts an endpoint's transformation decided, recorded on a database of their
 * own: a cancelled attempt ends its delivery `cancelled` (final, no retry, the endpoint's clock
 * and breaker untouched, not replayed), and the request a transformation made is kept on the
 * attempt, from a batch of successes and from one with failures alike.
 */
const pool = poolOnOwnDatabase(4);
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

async function endpoint(failingSince: Date | null = null): Promise<string> {
  const id = newId("endpoint");
  await pool.query(
    `INSERT INTO endpoints (id, account_id, app_id, url, secret, failing_since)
     VALUES ($1, $2, $3, 'https://e.example', 's', $4)`,
    [id, account, app, failingSince],
  );
  return id;
}

type Made = { attempt: string; delivery: string; event: string };

/** A delivery with its first attempt in flight, counted in its endpoint's flow. */
async function inFlight(endpointId: string): Promise<Made> {
  const [event, delivery, attempt] = [newId("event"), newId("delivery"), newId("attempt")];
  await pool.query("INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 't', '{}')", [
    event,
    account,
    app,
  ]);
  await pool.query(
    `INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts)
     VALUES ($1, $2, $3, $4, $5, 'pending', 0)`,
    [delivery, account, app, event, endpointId],
  );
  await pool.query(
    `INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, scheduled_at, sent_at)
     VALUES ($1, $2, $3, $4, $5, $6, 1, 'pending', 'https://e.example', now(), now())`,
    [attempt, account, app, delivery, event, endpointId],
  );
  await pool.query(
    `INSERT INTO endpoint_flows (endpoint_id, in_flight, failures) VALUES ($1, 1, 3)
     ON CONFLICT (endpoint_id) DO UPDATE SET in_flight = endpoint_flows.in_flight + 1`,
    [endpointId],
  );
  return { attempt, delivery, event };
}

const base = (d: Made): AttemptResult => ({
  attemptId: d.attempt,
  deliveryId: d.delivery,
  eventId: d.event,
  succeeded: false,
  responseStatus: null,
  responseBody: null,
  error: null,
  durationMs: 1,
  retryAfterMs: null,
  traceId: null,
  completedAt: new Date(),
  requestHeaders: null,
});
const cancelled = (d: Made): AttemptResult => ({ ...base(d), cancelled: true });
const transformed = { requestMethod: "PUT", requestUrl: "https://other.example/in", requestBody: '{"a":1}' };

const row = async (table: "deliveries" | "attempts", id: string) =>
  (await pool.query(`SELECT * FROM ${table} WHERE id = $1`, [id])).rows[0];
const flowOf = async (endpointId: string) =>
  (
    await pool.query("SELECT in_flight, failures, pause_reason FROM endpoint_flows WHERE endpoint_id = $1", [
      endpointId,
    ])
  ).rows[0];

describe("a cancelled attempt", () => {
  it("ends its delivery cancelled: no retry, the endpoint's clock and run of failures as they were", async () => {
    const healthy = await endpoint();
    const failingSince = new Date(Date.now() - 3_600_000);
    const failing = await endpoint(failingSince);
    const [a, b] = [await inFlight(healthy), await inFlight(failing)];
    const { recorded } = await writeResults(pool, [cancelled(a), cancelled(b)], policy);
    expect(recorded.map((r) => [r.deliveryId, r.status, r.retry, r.disabledReason]).sort()).toEqual(
      [
        [a.delivery, "cancelled", null, null],
        [b.delivery, "cancelled", null, null],
      ].sort(),
    );
    for (const d of [a, b]) {
      expect(await row("deliveries", d.delivery)).toMatchObject({
        status: "cancelled",
        next_attempt_at: null,
      });
      expect(await row("attempts", d.attempt)).toMatchObject({ status: "cancelled", error: null });
      const attempts = await pool.query("SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1", [
        d.delivery,
      ]);
      expect(attempts.rows[0].n).toBe(1);
    }
    const clocks = await pool.query<{ id: string; failing_since: Date | null }>(
      "SELECT id, failing_since FROM endpoints WHERE id = ANY($1)",
      [[healthy, failing]],
    );
    expect(new Map(clocks.rows.map((r) => [r.id, r.failing_since?.getTime() ?? null]))).toEqual(
      new Map([
        [healthy, null],
        [failing, failingSince.getTime()],
      ]),
    );
    // No longer in flight; the run of three unreachable attempts neither grows nor ends.
    expect(await flowOf(healthy)).toEqual({ in_flight: 0, failures: 3, pause_reason: null });
  });

  it("is not taken by a replay of the endpoint's failed deliveries", async () => {
    const ep = await endpoint();
    const [gone, failed] = [await inFlight(ep), await inFlight(ep)];
    await writeResults(pool, [cancelled(gone)], policy);
    await pool.query("UPDATE deliveries SET status = 'failed', last_attempt_at = now() WHERE id = $1", [
      failed.delivery,
    ]);
    const preview = await previewReplay(
      async (text, values) => (await pool.query(text, values)).rows,
      { endpointId: ep, since: null, cutoff: new Date(Date.now() + 60_000), eventId: null },
      10,
    );
    expect(preview.deliveries.map((d) => d.event_id)).toEqual([failed.event]);
  });
});

describe("the request a transformation made", () => {
  it("is kept on the attempt, from a batch of successes and from one with failures", async () => {
    const ep = await endpoint();
    const [ok, bad, plain] = [await inFlight(ep), await inFlight(ep), await inFlight(ep)];
    const success = { ...base(ok), succeeded: true, responseStatus: 200, responseBody: "ok", ...transformed };
    await writeResults(pool, [success], policy);
    const failure = {
      ...base(bad),
      responseStatus: 500,
      error: "http_error",
      ...transformed,
      requestBody: "caf\u00e9 \u0000",
    };
    await writeResults(pool, [failure, { ...base(plain), responseStatus: 500, error: "http_error" }], policy);
    expect(await row("attempts", ok.attempt)).toMatchObject({
      status: "succeeded",
      request_method: "PUT",
      request_url: "https://other.example/in",
      request_body: '{"a":1}',
    });
    // Made storable as a response body is: NUL becomes U+FFFD.
    expect(await row("attempts", bad.attempt)).toMatchObject({
      status: "failed",
      request_method: "PUT",
      request_body: "caf\u00e9 \ufffd",
    });
    expect(await row("attempts", plain.attempt)).toMatchObject({
      request_method: null,
      request_url: null,
      request_body: null,
    });
  });
});
