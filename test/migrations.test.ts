import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ATTEMPT_STATUSES, DELIVERY_STATUSES, REPLAY_STATUSES } from "@herald/contracts/statuses";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PG_URL } from "./support/env.ts";
import { createTestDatabase } from "./support/isolation.ts";

/**
 * The numbered SQL migrations and the Prisma schema must describe the same database: a
 * database built by the migrations and one built straight from schema.prisma (through
 * `prisma migrate diff --from-empty`) must have the same columns, indexes and constraints.
 */
const dbPackage = join(import.meta.dirname, "..", "packages", "db");
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of dropped) await drop();
});

async function catalog(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Partitioning is not Prisma's to describe either: a partitioned table is compared as the
    // table it stands for, and its partitions (migration 0016, the dispatcher's) are left out.
    const partitions = "(SELECT relname FROM pg_class WHERE relispartition)";
    const columns = await client.query(`
      SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default, datetime_precision
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT IN ${partitions}
      ORDER BY table_name, column_name`);
    // Partial indexes (the open attempts', the release gate's poll) are not Prisma's to describe
    // either: the lifecycle's statements that need them are tested against the migrated database.
    const indexes = await client.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexdef NOT LIKE '% WHERE %'
         AND tablename NOT IN ${partitions} ORDER BY indexname`,
    );
    // CHECK constraints are not Prisma's to describe: they are compared with the statuses below.
    // Nor are the delivery log's relations, which are not foreign keys (migration 0016).
    const constraints = await client.query(`
      SELECT c.conrelid::regclass::text AS rel, c.conname, pg_get_constraintdef(c.oid) AS def
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = 'public' AND c.contype <> 'c' AND c.conrelid::regclass::text NOT IN ${partitions}
        AND NOT (c.contype = 'f' AND c.conrelid::regclass::text IN ('events', 'deliveries', 'attempts'))
      ORDER BY rel, conname`);
    return [
      ...columns.rows.map((r) => `column ${JSON.stringify(r)}`),
      ...indexes.rows.map((r) => `index ${r.indexdef.replace(" ON ONLY ", " ON ")}`),
      ...constraints.rows.map((r) => `constraint ${r.rel} ${r.conname} ${r.def}`),
    ];
  } finally {
    await client.end();
  }
}

/** The values each status column's CHECK constraint allows, from the migrated database. */
async function allowedStatuses(url: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ rel: string; def: string }>(`
      SELECT c.conrelid::regclass::text AS rel, pg_get_constraintdef(c.oid) AS def
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = 'public' AND c.contype = 'c' AND c.conname LIKE '%status_check'
        AND c.conrelid NOT IN (SELECT oid FROM pg_class WHERE relispartition)`);
    return Object.fromEntries(
      rows.map((r) => [r.rel, [...r.def.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!)]),
    );
  } finally {
    await client.end();
  }
}

describe("migrations", () => {
  it("let each status column hold exactly the statuses the code knows", async () => {
    const db = await createTestDatabase();
    dropped.push(db.drop);
    expect(await allowedStatuses(db.url)).toEqual({
      deliveries: [...DELIVERY_STATUSES],
      attempts: [...ATTEMPT_STATUSES],
      replays: [...REPLAY_STATUSES],
    });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const refused = await client
      .query(
        "INSERT INTO replays (id, account_id, endpoint_id, status, queued) VALUES ('r', 'a', 'e', 'done', 0)",
      )
      .catch((err: { code?: string }) => err.code);
    await client.end();
    expect(refused).toBe("23514");
  });

  it("build exactly the database schema.prisma describes", async () => {
    const migrated = await createTestDatabase();
    dropped.push(migrated.drop);

    const fromSchema = await createTestDatabase();
    dropped.push(fromSchema.drop);
    const client = new pg.Client({ connectionString: fromSchema.url });
    await client.connect();
    await client.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
    const sql = execFileSync(
      "npx",
      [
        "prisma",
        "migrate",
        "diff",
        "--from-empty",
        "--to-schema-datamodel",
        "prisma/schema.prisma",
        "--script",
      ],
      {
        cwd: dbPackage,
        encoding: "utf8",
        env: { ...process.env, DATABASE_URL: PG_URL },
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    expect(sql).toContain("CREATE TABLE");
    await client.query(sql);
    await client.end();

    const expected = await catalog(fromSchema.url);
    const actual = await catalog(migrated.url);
    expect(
      actual.filter((line) => !expected.includes(line)),
      "in the migrations but not in schema.prisma",
    ).toEqual([]);
    expect(
      expected.filter((line) => !actual.includes(line)),
      "in schema.prisma but not in the migrations",
    ).toEqual([]);
  });
});
