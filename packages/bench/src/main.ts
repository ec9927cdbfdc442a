/**
 * `npm run bench`: measures this machine's raw ceilings, starts the whole system (or uses the one
 * given by --url/--key), forks the load generator, runs each scenario (end-to-end deliveries with
 * 1 and 10 endpoints, latency at fixed rates, latency beside a hanging endpoint, ingest), then
 * prints the table and writes bench-results/<timestamp>.json, latest.json and report.html.
 * Missing a target does not fail.
 */
import { join, relative } from "node:path";
import { ensureDatabase } from "@herald/db";
import { DEFAULT_AMQP_URL, DEFAULT_DATABASE_URL } from "@herald/runtime/config";
import { createApps, deleteApps } from "./apps.ts";
import { type Ceilings, httpCeiling, postgresCeiling, rabbitmqCeiling } from "./ceilings.ts";
import { cleanUp, onCleanUp } from "./cleanup.ts";
import { forkLoadGenerator } from "./loadProcess.ts";
import { sampleMemory } from "./memory.ts";
import { parseOptions, USAGE } from "./options.ts";
import { progress, say } from "./progress.ts";
import type { Job, JobResult } from "./protocol.ts";
import { formatTable, writeReports } from "./report.ts";
import {
  type BenchResults,
  endToEndFigures,
  ingestFigures,
  latencyFigures,
  machine,
  neighbourFigures,
} from "./results.ts";
import {
  endToEndJobs,
  FULL,
  ingestJob,
  latencyJobs,
  neighbourJob,
  QUICK,
  systemWarmUpJob,
} from "./scenarios.ts";
import { benchDatabaseUrl, freshDatabase, runningSystem, startSystem } from "./system.ts";
import { checkTargets } from "./targets.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const resultsDir = join(root, "bench-results");

const parsed = parseOptions(process.argv.slice(2));
if ("error" in parsed) {
  if (parsed.error) console.error(`${parsed.error}\n\n${USAGE}`);
  else console.log(USAGE);
  process.exit(parsed.error ? 2 : 0);
}
const options = parsed;
const durations = options.quick ? QUICK : FULL;
const amqpUrl = process.env.AMQP_URL ?? DEFAULT_AMQP_URL;
const databaseUrl = benchDatabaseUrl(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  say(
    `${options.quick ? "quick" : "full"} run; results go to ${relative(process.cwd(), resultsDir) || "."}/`,
  );
  const load = await forkLoadGenerator();
  onCleanUp(load.kill, load.kill);

  if (options.target) await ensureDatabase(databaseUrl);
  else await freshDatabase(databaseUrl);
  const ceiling = durations.ceiling;
  const ceilings: Ceilings = {
    httpPostsPerSecond: await httpCeiling(load, ceiling, progress("ceiling: HTTP POSTs")),
    rabbitmqMessagesPerSecond: await rabbitmqCeiling(amqpUrl, ceiling, progress("ceiling: RabbitMQ")),
    postgresInsertsPerSecond: await postgresCeiling(databaseUrl, ceiling, progress("ceiling: Postgres")),
  };

  say(
    options.target
      ? `using the system at ${options.target.url}`
      : `starting the api-gateway, ${options.dispatchers} dispatcher(s) and ${options.senders} sender(s)…`,
  );
  const system = options.target
    ? runningSystem(options.target.url, options.target.key)
    : await startSystem({
        root,
        databaseUrl,
        amqpUrl,
        dispatchers: options.dispatchers,
        senders: options.senders,
        logLevel: options.logLevel,
        env: options.env,
        logDir: join(resultsDir, "logs"),
        cpuProfDir: options.cpuProf ? join("bench-results", "profiles") : null,
      });
  load.init(system.gateway);
  const apps = await createApps(system.gateway, load.receiverPort);
  if (options.target) onCleanUp(() => deleteApps(system.gateway, apps));
  const memory = sampleMemory(system.processes);

  const step = async (name: string, job: Job): Promise<JobResult> => {
    await system.settle(durations.drainMs);
    return Promise.race([load.run(job, progress(name)), system.failed]);
  };
  await step("warming the system up", systemWarmUpJob(apps, durations));
  const endToEnd = [];
  for (const job of endToEndJobs(apps, durations)) {
    const result = await step(`end-to-end, ${job.paths.length} endpoint(s)`, job);
    endToEnd.push(endToEndFigures(job, result, ceilings));
  }
  const latency = [];
  for (const job of latencyJobs(apps, durations))
    latency.push(latencyFigures(job, await step(`latency at ${job.rate} events/s`, job)));
  const noisy = neighbourJob(apps, durations);
  const neighbour = neighbourFigures(noisy, await step("beside a hanging endpoint", noisy));
  const ingest = ingestJob(apps, durations);
  const ingestResult = ingestFigures(ingest, await step("ingest", ingest), ceilings);

  const peaks = memory.finish();
  say(options.target ? "deleting the benchmark's apps…" : "stopping the services…");
  await cleanUp();
  const figures: Omit<BenchResults, "targets"> = {
    version: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: options.quick ? "quick" : "full",
    system: {
      url: options.target?.url ?? null,
      dispatchers: options.target ? null : options.dispatchers,
      senders: options.target ? null : options.senders,
      env: options.env,
    },
    machine: machine(),
    ceilings,
    ingest: ingestResult,
    endToEnd,
    latency,
    neighbour,
    memory: peaks,
    serviceOutput: system.output(),
  };
  const results: BenchResults = { ...figures, targets: checkTargets(figures) };
  const files = await writeReports(results, resultsDir);
  console.log(`\n${formatTable(results)}\n`);
  say(`wrote ${files.map((f) => relative(root, f)).join(", ")}`);
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanUp();
    process.exit(1);
  },
);
