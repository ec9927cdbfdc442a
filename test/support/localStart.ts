import { rmSync } from "node:fs";
import { DEFAULT_SCHEDULE, delayTiers, parseSchedule } from "@herald/db/lifecycle";
import pg from "pg";
import { PG_URL } from "./env.ts";

/** What a test's own `npm start` leaves behind: its queues (delay queues too), database and state folder. */
export async function removeLocalStart(
  dbName: string,
  queues: { remove: (delaysMs?: number[]) => Promise<void> },
  stateDir: string,
): Promise<void> {
  await queues.remove(delayTiers(parseSchedule(DEFAULT_SCHEDULE)!)).catch(() => {});
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  rmSync(stateDir, { recursive: true, force: true });
}
