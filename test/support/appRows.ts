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
