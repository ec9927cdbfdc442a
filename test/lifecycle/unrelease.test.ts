import { newId } from "@herald/db";
import { createDeliveries, type FanOutEndpoint, unrelease } from "@herald/db/lifecycle";
import { beforeAll, describe, expect, it } from "vitest";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

/**
 * Putting back attempts whose publish failed: unsent again and out of the endpoint's count in
 * flight. A row another statement holds at that moment is skipped, not waited for, and not
 * reported as put back, so the caller (the dispatcher's putBack) tries it again.
 */
const pool = poolOnOwnDatabase(4);
const account = newId("account");
const app = newId("app");
let endpoint: FanOutEndpoint;

beforeAll(async () => {
  await pool.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [account]);
  await pool.query("INSERT INTO apps (id, account_id, name) VALUES ($1, $2, 'a')", [app, account]);
  const id = newId("endpoint");
  await pool.query(
    "INSERT INTO endpoints (id, account_id, app_id, url, secret) VALUES ($1, $2, $3, 'https://e.example', 's')",
    [id, account, app],
  );
  await pool.query("INSERT INTO endpoint_flows (endpoint_id) VALUES ($1)", [id]);
  endpoint = { id, app_id: app, url: "https://e.example", event_types: [], filter: null, fifo: false };
});

async function released(n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId("event"));
  await pool.query(
    "INSERT INTO events (id, account_id, app_id, type, data, data_bytes) SELECT id, $2, $3, 't', '{}', 2 FROM unnest($1::text[]) id",
    [ids, account, app],
  );
  const events = ids.map((id) => ({ id, account_id: account, app_id: app, type: "t", data_bytes: 2 }));
  const { send } = await createDeliveries(
    pool,
    events.map((event) => ({ event, endpoint })),
    100,
  );
  return send.map((a) => a.id);
}

const state = async (ids: string[]) =>
  (
    await pool.query<{ unsent: number; in_flight: number }>(
      `SELECT (SELECT count(*)::int FROM attempts WHERE id = ANY($1) AND sent_at IS NULL) AS unsent,
              (SELECT in_flight FROM endpoint_flows WHERE endpoint_id = $2) AS in_flight`,
      [ids, endpoint.id],
    )
  ).rows[0];

describe("unrelease", () => {
  it("puts back what it can take now, says which, and the rest once they are free", async () => {
    const ids = await released(3);
    expect(ids).toHaveLength(3);
    expect(await state(ids)).toEqual({ unsent: 0, in_flight: 3 });

    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM attempts WHERE id = $1 FOR NO KEY UPDATE", [ids[0]]);
      const first = await unrelease(pool, ids);
      expect(first.sort()).toEqual(ids.slice(1).sort());
      expect(await state(ids)).toEqual({ unsent: 2, in_flight: 1 });
    } finally {
      await holder.query("COMMIT");
      holder.release();
    }
    // Once free, the one skipped goes back; those already back count as back, not twice.
    expect((await unrelease(pool, ids)).sort()).toEqual([...ids].sort());
    expect(await state(ids)).toEqual({ unsent: 3, in_flight: 0 });
  });
});
