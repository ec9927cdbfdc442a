import { newId } from "@herald/db";
import type { Pool } from "pg";

/** Every row an app still has: its attempts, deliveries, events, endpoints and its own. */
export async function appRows(pool: Pick<Pool, "query">, appId: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM attempts WHERE app_id = $1) + (SELECT count(*) FROM deliveries WHERE app_id = $1)
          + (SELECT count(*) FROM events WHERE app_id = $1) + (SELECT count(*) FROM endpoints WHERE app_id = $1)
          + (SELECT count(*) FROM apps WHERE id = $1) AS n`,
    [appId],
  );
  return Number(rows[0]!.n);
}

/** A fresh account with one app and one endpoint, as rows: what a lifecycle test builds on. */
export async function accountWithEndpoint(
  pool: Pick<Pool, "query">,
): Promise<{ account: string; app: string; endpoint: string }> {
  const [account, app, endpoint] = [newId("account"), newId("app"), newId("endpoint")];
  await pool.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [account]);
  await pool.query("INSERT INTO apps (id, account_id, name) VALUES ($1, $2, 'a')", [app, account]);
  await pool.query(
    "INSERT INTO endpoints (id, account_id, app_id, url, secret) VALUES ($1, $2, $3, 'https://e.example', 's')",
    [endpoint, account, app],
  );
  return { account, app, endpoint };
}
