import { newId } from "@herald/db";
import {
  createDeliveries,
  type FanOutEndpoint,
  type FanOutEvent,
  type FlowSettings,
  release,
} from "@herald/db/lifecycle";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/dispatcher/src/config.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

/**
 * Fan-out's fast path on a database of its own: an endpoint with room and nothing waiting has
 * its new attempts created already released (counted in flight, in the same statement);
 * any other is left to the release gate, which then keeps every limit as before. Concurrent
 * fan-outs never put an endpoint past its limit between them.
 */
const pool = poolOnOwnDatabase(12);
const account = newId("account");
const app = newId("app");
const settings: FlowSettings = { ...loadConfig({}).flow, maxInFlight: 5 };

beforeAll(async () => {
  await pool.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [account]);
  await pool.query("INSERT INTO apps (id, account_id, name) VALUES ($1, $2, 'a')", [app, account]);
});

async function endpoint(extra: { rate_limit?: number; ordering?: string } = {}): Promise<FanOutEndpoint> {
  const id = newId("endpoint");
  await pool.query(
    `INSERT INTO endpoints (id, account_id, app_id, url, secret, rate_limit, ordering)
     VALUES ($1, $2, $3, 'https://e.example', 's', $4, $5)`,
    [id, account, app, extra.rate_limit ?? null, extra.ordering ?? "none"],
  );
  await pool.query("INSERT INTO endpoint_flows (endpoint_id) VALUES ($1)", [id]);
  return {
    id,
    app_id: app,
    url: "https://e.example",
    event_types: [],
    filter: null,
    fifo: extra.ordering === "fifo",
  };
}

async function events(n: number): Promise<FanOutEvent[]> {
  const ids = Array.from({ length: n }, () => newId("event"));
  await pool.query(
    "INSERT INTO events (id, account_id, app_id, type, data, data_bytes) SELECT id, $2, $3, 't', '{\"a\":1}', 7 FROM unnest($1::text[]) id",
    [ids, account, app],
  );
  return ids.map((id) => ({ id, account_id: account, app_id: app, type: "t", data_bytes: 7 }));
}

const targets = (evs: FanOutEvent[], ep: FanOutEndpoint) => evs.map((event) => ({ event, endpoint: ep }));

const flow = async (endpointId: string) =>
  (
    await pool.query<{ in_flight: number; held_by: string | null }>(
      "SELECT in_flight, held_by FROM endpoint_flows WHERE endpoint_id = $1",
      [endpointId],
    )
  ).rows[0]!;

const sentCount = async (endpointId: string) =>
  Number(
    (
      await pool.query(
        "SELECT count(*) FROM attempts WHERE endpoint_id = $1 AND status = 'pending' AND sent_at IS NOT NULL",
        [endpointId],
      )
    ).rows[0].count,
  );

describe("fan-out's fast path", () => {
  it("creates the first attempts of an endpoint with room already released, in one statement", async () => {
    const ep = await endpoint();
    const evs = await events(3);
    const r = await createDeliveries(pool, targets(evs, ep), settings.maxInFlight);
    expect(r.created).toBe(3);
    expect(r.gate).toEqual([]);
    expect(r.send.map((a) => a.event_id).sort()).toEqual(evs.map((e) => e.id).sort());
    // What a sender needs comes with them, as from the gate.
    expect(r.send[0]).toMatchObject({
      url: "https://e.example",
      type: "t",
      data: '{"a": 1}',
      attempt_number: 1,
    });
    expect(await flow(ep.id)).toEqual({ in_flight: 3, held_by: null });
    expect(await sentCount(ep.id)).toBe(3);
  });

  it("leaves to the gate what does not fit, and the gate keeps the limit", async () => {
    const ep = await endpoint();
    const r = await createDeliveries(pool, targets(await events(7), ep), settings.maxInFlight);
    expect(r.send).toEqual([]);
    expect(r.gate).toEqual([ep.id]);
    expect(await flow(ep.id)).toEqual({ in_flight: 0, held_by: null });
    const gated = await release(pool, { endpoints: r.gate }, settings);
    expect(gated.send).toHaveLength(settings.maxInFlight);
    expect(await flow(ep.id)).toMatchObject({ in_flight: settings.maxInFlight, held_by: "max_in_flight" });
  });

  it("sends nothing past what waits: an endpoint held by its limit takes the gate, even with room", async () => {
    const ep = await endpoint();
    await createDeliveries(pool, targets(await events(7), ep), settings.maxInFlight);
    await release(pool, { endpoints: [ep.id] }, settings);
    // Room made by hand, as results would, the held flag left as the gate set it.
    await pool.query("UPDATE endpoint_flows SET in_flight = 0 WHERE endpoint_id = $1", [ep.id]);
    const r = await createDeliveries(pool, targets(await events(1), ep), settings.maxInFlight);
    expect(r.send).toEqual([]);
    expect(r.gate).toEqual([ep.id]);
  });

  it("leaves endpoints with a rate limit or an order to keep to the gate", async () => {
    const limited = await endpoint({ rate_limit: 5 });
    const fifo = await endpoint({ ordering: "fifo" });
    const evs = await events(1);
    const r = await createDeliveries(
      pool,
      [...targets(evs, limited), ...targets(evs, fifo)],
      settings.maxInFlight,
    );
    expect(r.created).toBe(2);
    expect(r.send).toEqual([]);
    expect(r.gate.sort()).toEqual([limited.id, fifo.id].sort());
    expect((await flow(limited.id)).in_flight).toBe(0);
  });

  it("creates and releases nothing twice for a redelivered message, and hands it to the gate", async () => {
    const ep = await endpoint();
    const evs = await events(2);
    const first = await createDeliveries(pool, targets(evs, ep), settings.maxInFlight);
    expect(first.send).toHaveLength(2);
    const again = await createDeliveries(pool, targets(evs, ep), settings.maxInFlight);
    expect(again).toMatchObject({ created: 0, send: [], gate: [ep.id] });
    expect(await flow(ep.id)).toEqual({ in_flight: 2, held_by: null });
    expect((await release(pool, { endpoints: again.gate }, settings)).send).toEqual([]);
  });

  it("never puts an endpoint past its limit between concurrent fan-outs", async () => {
    const ep = await endpoint();
    const batches = await Promise.all(Array.from({ length: 8 }, () => events(2)));
    const runs = await Promise.all(
      batches.map((evs) => createDeliveries(pool, targets(evs, ep), settings.maxInFlight)),
    );
    const fast = runs.flatMap((r) => r.send);
    expect(fast.length).toBeLessThanOrEqual(settings.maxInFlight);
    expect(fast.length % 2).toBe(0);
    expect(await flow(ep.id)).toMatchObject({ in_flight: fast.length });
    expect(await sentCount(ep.id)).toBe(fast.length);
    // The rest go through the gate, up to the limit and no further.
    await release(pool, { endpoints: [ep.id] }, settings);
    expect(await sentCount(ep.id)).toBe(settings.maxInFlight);
    expect((await flow(ep.id)).in_flight).toBe(settings.maxInFlight);
  });
});
