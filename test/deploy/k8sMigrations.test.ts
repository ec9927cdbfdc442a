import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { databaseUrl, PG_URL, RUN_ID } from "../support/env.ts";
import {
  type Container,
  containerEnv,
  find,
  migrationJob,
  render,
  root,
  sampleSecrets,
} from "../support/k8s.ts";
import { type NodeProcess, runNode } from "../support/processes.ts";

/**
 * The ordering the manifests rely on, run for real against PostgreSQL: the services' init
 * containers (the migrate CLI in wait mode, with the environment the manifests give them) hold
 * until the migration Job (the same CLI with the Job's environment) has applied every
 * migration, on a first install where the database does not even exist yet.
 */
const objects = render("production");
const job = migrationJob(objects).spec.template.spec.containers[0] as Container;
const initContainer = (
  find(objects, "Deployment", "herald-api-gateway").spec.template.spec.initContainers as Container[]
).find((c) => c.name === "wait-for-migrations")!;
const secrets = sampleSecrets(randomBytes(32).toString("base64"));

const created: string[] = [];
afterAll(async () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

/** A database name of this run that does not exist yet. */
function newDatabase(): string {
  const name = `herald_t_${RUN_ID}_k8s_${randomBytes(4).toString("hex")}`;
  created.push(name);
  return name;
}

type Run = NodeProcess;

/** The migrate CLI as the container runs it: its environment from the manifests, our database. */
function runMigrate(
  container: Container,
  database: string,
  extra: Record<string, string> = {},
  args: string[] = [],
): Run {
  const env = { ...containerEnv(objects, container, secrets), DATABASE_URL: databaseUrl(database), ...extra };
  return runNode(["--import", "tsx", "packages/db/src/migrateCli.ts", ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
}

const settled = (run: Run, ms: number) =>
  Promise.race([run.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe("the migration ordering", () => {
  it("holds the services until the Job has created and migrated the database", async () => {
    const database = newDatabase();
    const waiting = runMigrate(initContainer, database);
    try {
      // No database yet: the init container waits, it does not fail or create anything.
      await expect.poll(() => waiting.output(), { timeout: 15_000 }).toContain("waiting for the database");
      expect(await settled(waiting, 2500)).toBe(false);

      const migrating = runMigrate(job, database);
      expect(await migrating.exited, migrating.output()).toBe(0);
      expect(migrating.output()).toContain("applied migration 0001_init");

      expect(await waiting.exited, waiting.output()).toBe(0);
      expect(waiting.output()).toContain("database is up to date");
    } finally {
      waiting.child.kill("SIGKILL");
    }
  });

  it("waits while migrations are pending, and stops after MIGRATE_TIMEOUT", async () => {
    const database = newDatabase();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();

    const check = runMigrate(job, database, {}, ["--check"]);
    expect(await check.exited).toBe(2);
    expect(check.output()).toContain("pending migration(s): 0001_init");

    // A duration as every setting takes one (@herald/runtime's parseDuration): fractions too.
    const waiting = runMigrate(initContainer, database, { MIGRATE_TIMEOUT: "2.5s" });
    expect(await waiting.exited, waiting.output()).toBe(1);
    expect(waiting.output()).toContain("timed out waiting for migration(s) 0001_init");
  });

  it("fails at once when an applied migration has changed, instead of starting on it", async () => {
    const database = newDatabase();
    const migrating = runMigrate(job, database);
    expect(await migrating.exited, migrating.output()).toBe(0);
    const client = new pg.Client({ connectionString: databaseUrl(database) });
    await client.connect();
    await client.query("UPDATE herald_meta.migrations SET checksum = 'edited' WHERE name = '0001_init'");
    await client.end();

    const waiting = runMigrate(initContainer, database);
    expect(await waiting.exited).toBe(1);
    expect(waiting.output()).toContain("0001_init changed after they were applied");
    const check = runMigrate(job, database, {}, ["--check"]);
    expect(await check.exited).toBe(1);
  });

  it("refuses a MIGRATE_TIMEOUT that is not a duration", async () => {
    const run = runMigrate(initContainer, newDatabase(), { MIGRATE_TIMEOUT: "soon" });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(
      'MIGRATE_TIMEOUT must be a duration such as 500ms, 5s, 5m, 2h or 5d, got "soon"',
    );
  });

  it("refuses an unknown MIGRATE_MODE", async () => {
    const run = runMigrate(job, newDatabase(), { MIGRATE_MODE: "later" });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain("MIGRATE_MODE must be apply, check or wait");
  });
});
