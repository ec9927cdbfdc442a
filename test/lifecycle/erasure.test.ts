import { newId } from "@herald/db";
import { eventsToFanOut } from "@herald/db/lifecycle";
import { describe, expect, it } from "vitest";
import { accountWithEndpoint } from "../support/appRows.ts";
import { poolOnOwnDatabase } from "../support/ownDatabase.ts";

const pool = poolOnOwnDatabase(2);

describe("an event erased before its fan-out", () => {
  it("gets no deliveries: fan-out passes it by, and takes the one beside it", async () => {
    const { account, app, endpoint } = await accountWithEndpoint(pool);
    const [kept, erased] = [newId("event"), newId("event")];
    await pool.query(
      `INSERT INTO events (id, account_id, app_id, type, data, data_erased_at)
       VALUES ($1, $3, $4, 't', '{"n":1}', NULL), ($2, $3, $4, 't', '{}', now())`,
      [kept, erased, account, app],
    );
    const { events, endpoints } = await eventsToFanOut(pool, [kept, erased]);
    expect(events.map((e) => e.id)).toEqual([kept]);
    expect(endpoints.map((e) => e.id)).toEqual([endpoint]);
  });
});
