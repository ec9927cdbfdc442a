import { migrate } from "@herald/db";
import pg from "pg";
import { databaseUrl, PG_URL, RUN_ID, TEMPLATE_DB } from "./env.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Once per run: a freshly migrated template database. Each test file clones it
 * (CREATE DATABASE … TEMPLATE), which takes milliseconds and shares nothing.
 */
export default async function setup(): Promise<() => Promise<void>> {
  // Workers are started after this runs and inherit the run id, so they name the same template.
  process.env.HERALD_TEST_RUN = RUN_ID;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  // Leftovers of interrupted earlier runs; a run still going on keeps its own.
  const stale = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'herald\\_t\\_%'",
  );
  for (const { datname } of stale.rows) {
    const pid = Number(datname.split("_")[2]);
    if (!alive(pid)) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  await migrate(databaseUrl(TEMPLATE_DB));
  return async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await client.end();
  };
}
