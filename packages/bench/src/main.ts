/**
 * `npm run bench`: measures this machine's raw ceilings, forks the load generator, then for each
 * profile (lean, then as deployed: profiles.ts) starts the whole system on a fresh database and
 * runs each scenario (end-to-end deliveries with 1 and 10 endpoints, latency at fixed rates,
 * latency beside a hanging endpoint, ingest); with --url/--key it loads the system given instead.
 * Prints the table and writes bench-results/<timestamp>.json, latest.json and report.html.
 * Missing a target does not fail.
 */
import { rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureDatabase } from "@herald/db";
import { DEFAULT_AMQP_URL, DEFAULT_DATABASE_URL } from "@herald/runtime/config";
import { createApps, deleteApps } from "./apps.ts";
import { bounds } from "./bound.ts";
import { type Ceilings, httpCeiling, postgresCeiling, rabbitmqCeiling } from "./ceilings.ts";
import { cleanUp, onCleanUp } from "./cleanup.ts";
import { type DbWaits, sampleDbWaits } from "./dbWaits.ts";
import { diskUse, logBytesAt } from "./diskUse.ts";
import { type HopBreakdown, hopBreakdown } from "./hops.ts";
import { forkLoadGenerator, type LoadGenerator } from "./loadProcess.ts";
import { sampleMemory } from "./memory.ts";
import { parseOptions, USAGE } from "./options.ts";
import { type Profile, prepareProfile } from "./profiles.ts";
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
  type ProfileResults,
} from "./results.ts";
import {
  endToEndJobs,
  FULL,
  ingestJob,
  LATENCY_RATES,
  latencyJobs,
  neighbourJob,
  QUICK,
  systemWarmUpJob,
} from "./scenarios.ts";
import { benchDatabaseUrl, freshDatabase, runningSystem, type System, startSystem } from "./system.ts";
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
/** Past the span processor's schedule (5 s by default): the last spans of a window reach the sink. */
const TRACE_EXPORT_WAIT_MS = 6000;

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const names = options.target ? ["given" as const] : options.profiles;
  say(
    `${options.quick ? "quick" : "full"} run (${names.join(" and ")}); results go to ${relative(process.cwd(), resultsDir) || "."}/`,
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
  await rm(join(resultsDir, "logs"), { recursive: true, force: true });
  const profiles: ProfileResults[] = [];
  for (const name of names) {
    if (name === "deployed") say("building the services as the images hold them…");
    const profile =
      name === "given"
        ? null
        : await prepareProfile(name, {
            root,
            buildDir: join(resultsDir, "build"),
            logLevel: options.logLevel,
          });
    profiles.push(await runProfile(load, ceilings, profile));
  }
  await cleanUp();
  const results: BenchResults = {
    version: 2,
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
    bounds: bounds(ceilings),
    profiles,
  };
  const files = await writeReports(results, resultsDir);
  console.log(`\n${formatTable(results)}\n`);
  say(`wrote ${files.map((f) => relative(root, f)).join(", ")}`);
}

/** Every scenario on a system started as `profile` says (or the one given by --url when null). */
async function runProfile(
  load: LoadGenerator,
  ceilings: Ceilings,
  profile: Profile | null,
): Promise<ProfileResults> {
  const label = profile ? `${profile.name}: ` : "";
  let system: System;
  if (options.target) {
    say(`using the system at ${options.target.url}`);
    system = runningSystem(options.target.url, options.target.key);
  } else {
    await freshDatabase(databaseUrl);
    say(
      `${label}starting the api-gateway, ${options.dispatchers} dispatcher(s) and ${options.senders} sender(s)…`,
    );
    system = await startSystem({
      launch: profile!.launch,
      databaseUrl,
      amqpUrl,
      dispatchers: options.dispatchers,
      senders: options.senders,
      logLevel: profile!.logLevel,
      env: { ...profile!.env, ...options.env },
      logDir: join(resultsDir, "logs", profile!.name),
      cpuProfDir: options.cpuProf ? join(resultsDir, "profiles", profile!.name) : null,
    });
  }
  load.init(system.gateway);
  const apps = await createApps(system.gateway, load.receiverPort);
  // A system the benchmark did not start keeps running: its apps go once the run ends.
  if (options.target) onCleanUp(() => deleteApps(system.gateway, apps));
  const memory = sampleMemory(system.processes);

  /** Runs a job once the last one's backlog settled; `settled` runs in between (a sampler's start). */
  const step = async (name: string, job: Job, settled?: () => Promise<void>): Promise<JobResult> => {
    await system.settle(durations.drainMs);
    await settled?.();
    return Promise.race([load.run(job, progress(`${label}${name}`)), system.failed]);
  };
  await step("warming the system up", systemWarmUpJob(apps, durations));
  const endToEnd = [];
  for (const job of endToEndJobs(apps, durations)) {
    // What the scenario leaves on disk: only in a database the benchmark made.
    let before = 0;
    const result = await step(
      `end-to-end, ${job.label ?? `${job.paths.length} endpoint(s)`}`,
      job,
      async () => {
        if (!options.target) before = await logBytesAt(databaseUrl);
      },
    );
    const endpoints = job.paths.length;
    const disk = options.target
      ? null
      : diskUse(
          before,
          await logBytesAt(databaseUrl),
          (result.deliveries?.expected ?? 0) / endpoints,
          endpoints,
        );
    endToEnd.push({ ...endToEndFigures(job, result, ceilings), disk });
  }
  const latency = [];
  let hops: HopBreakdown | null = null;
  let dbWaits: DbWaits | null = null;
  for (const job of latencyJobs(apps, durations)) {
    // The breakdowns are taken at the lower rate: where an event's time goes when nothing queues.
    const first = job.rate === LATENCY_RATES[0];
    const traced = profile?.sink && first;
    if (traced) profile.sink!.record(true);
    const sampling: { stop?: () => Promise<DbWaits> } = {};
    const result = await step(`latency at ${job.rate} events/s`, job, async () => {
      if (first && profile) sampling.stop = (await sampleDbWaits(databaseUrl)).stop;
    });
    if (sampling.stop) dbWaits = await sampling.stop();
    latency.push(latencyFigures(job, result));
    if (traced) {
      await sleep(TRACE_EXPORT_WAIT_MS);
      profile.sink!.record(false);
      hops = hopBreakdown(profile.sink!.take());
    }
  }
  const noisy = neighbourJob(apps, durations);
  const neighbour = neighbourFigures(noisy, await step("beside a hanging endpoint", noisy));
  const ingest = ingestJob(apps, durations);
  const ingestResult = ingestFigures(ingest, await step("ingest", ingest), ceilings);

  const peaks = memory.finish();
  if (!options.target) say(`${label}stopping the services…`);
  await system.stop();
  const figures: Omit<ProfileResults, "targets"> = {
    profile: profile?.name ?? "given",
    description: profile?.description ?? `the system at ${options.target?.url}`,
    ingest: ingestResult,
    endToEnd,
    latency,
    neighbour,
    hops,
    dbWaits,
    memory: peaks,
    serviceOutput: system.output(),
  };
  return { ...figures, targets: checkTargets(figures) };
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanUp();
    process.exit(1);
  },
);
