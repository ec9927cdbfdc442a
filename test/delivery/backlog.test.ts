import { newId } from "@herald/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntilQuiet } from "../support/consumers.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { latenciesAt10PerSecond, median, p99 } from "../support/latency.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * A replay of 3,000 failed deliveries to an endpoint that answers in 2 s goes through the
 * senders' backlog lane, paced by the endpoint's limits: another app's new events meanwhile
 * arrive within a few seconds of acceptance, not behind the replay (which takes about 24 s),
 * the replay finishes, and it delivers each event once. Most arrive within a second; the bound
 * on the slowest is 5 s, since this machine, running other suites beside this one, has held
 * everything up for 3 s at times (seen once with 7 of 60 events, on a clean clone's run).
 * One sender (256 backlog slots by default) and an ENDPOINT_MAX_IN_FLIGHT of 250 (the most any
 * endpoint may have; its own `max_in_flight` only lowers it) keep the replay's own length near
 * 24 s.
 */
const FAILED = 3000;
let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  sys = await startSystem({ ENDPOINT_MAX_IN_FLIGHT: "250" });
  receiver = await startReceiver();
  receiver.on("/slow", { delayMs: 2000 });
  await setupApp(sys, ["bulk.tick"], "bulk");
  await setupApp(sys, ["live.tick"], "live");
});
afterAll(async () => {
  await receiver?.close();
  await sys?.close();
});

/** `count` events of the app, each with a failed delivery to the endpoint, written directly. */
async function failedDeliveries(appUid: string, endpointId: string, url: string, count: number) {
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string; account_id: string }>(
      "SELECT id, account_id FROM apps WHERE uid = $1",
      [appUid],
    );
    const app = rows[0]!;
    const events = Array.from({ length: count }, () => newId("event"));
    const deliveries = events.map(() => newId("delivery"));
    const attempts = events.map(() => newId("attempt"));
    await db.query(
      `WITH x AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS x(event_id, delivery_id, attempt_id)),
       e AS (INSERT INTO events (id, account_id, app_id, type, data, created_at)
             SELECT event_id, $4, $5, 'bulk.tick', '{"n":1}', now() - interval '1 hour' FROM x),
       d AS (INSERT INTO deliveries (id, account_id, app_id, event_id, endpoint_id, status, attempts, last_attempt_at, created_at, updated_at)
             SELECT delivery_id, $4, $5, event_id, $6, 'failed', 1, now() - interval '1 minute', now(), now() FROM x)
       INSERT INTO attempts (id, account_id, app_id, delivery_id, event_id, endpoint_id, attempt_number, status, url, error, scheduled_at, created_at, completed_at)
       SELECT attempt_id, $4, $5, delivery_id, event_id, $6, 1, 'failed', $7, 'timeout', now() - interval '1 hour', now(), now() - interval '1 minute' FROM x`,
      [events, deliveries, attempts, app.account_id, app.id, endpointId, url],
    );
    return events;
  } finally {
    await db.end();
  }
}

describe("a replay of thousands to a slow endpoint", () => {
  // 3,000 deliveries paced through one slow endpoint, and polls of up to 60 s: more than the
  // default 30 s a test may take.
  it("delays no other app's new events, finishes, and delivers each event once", {
    timeout: 120_000,
  }, async () => {
    const bulk = fixtures(sys, receiver, "bulk");
    const live = fixtures(sys, receiver, "live");
    const slow = await bulk.endpoint("/slow");
    await live.endpoint("/live");
    const events = await failedDeliveries("bulk", slow, `${receiver.url}/slow`, FAILED);

    const replay = await sys.request("POST", `/v3/endpoints/${slow}/replay`, { json: {} });
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    expect(replay.body.queued).toBe(FAILED);

    const latencies = await latenciesAt10PerSecond(live, receiver, "live.tick", "/live", 60);
    expect(median(latencies), `latencies ${latencies.join(",")}`).toBeLessThanOrEqual(1000);
    expect(p99(latencies), `latencies ${latencies.join(",")}`).toBeLessThanOrEqual(5000);
    // The replay was under way meanwhile, not finished before the live events were sent.
    expect(receiver.received("/slow").length).toBeLessThan(FAILED);

    await expect
      .poll(async () => (await sys.request("GET", `/v3/replays/${replay.body.id}`)).body.status, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe("completed");
    await expect
      .poll(() => receiver.received("/slow").length, { timeout: 60_000, interval: 500 })
      .toBe(FAILED);
    const ids = receiver.received("/slow").map((r) => String(r.headers["webhook-id"]));
    expect(new Set(ids).size).toBe(FAILED);
    expect(new Set(ids)).toEqual(new Set(events));
    // Nothing more is on its way once no attempt to it waits for its result and the senders have
    // nothing left: the replay made all its attempts before it completed, an attempt is published
    // once it is released (the sweeper sends one again only past ATTEMPT_DEADLINE, 10 min), a
    // result is recorded after the receiver got its request, and a failed one's retry is written
    // with it; an attempt's message published twice is in a sender's lane or hands until sent.
    await expect
      .poll(
        async () =>
          (await sys.request("GET", `/v3/attempts?endpoint=${slow}&status=pending&limit=1`)).body.data.length,
        { timeout: 15_000, interval: 200 },
      )
      .toBe(0);
    const brokers = sys.senders.map((s) => s.broker);
    const { queues } = brokers[0]!.topology;
    await waitUntilQuiet(brokers, [queues.senderAttempts, queues.senderBacklog, queues.senderLarge]);
    expect(receiver.received("/slow")).toHaveLength(FAILED);
  });
});
