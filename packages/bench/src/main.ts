/**
 * `npm run bench`: measures this machine's raw ceilings, forks the load generator, then for each
 * profile (lean, then as deployed: profiles.ts) starts the whole system on a fresh database and
 * runs each scenario (end-to-end deliveries with 1 and 10 endpoints, a transformed endpoint
 * beside a plain one, with --destination redis HTTP endpoints against Redis streams, latency at
 * fixed rates, latency beside a hanging endpoint, sustained load, ingest); with --url/--key it
 * loads the system given instead. With --against <ref> each profile runs on the ref's build and
 * on this one alternately (compare.ts), and the figures are compared. With --soak <minutes> it
 * runs only the soak (soak.ts), lean unless --profile says otherwise. Prints the table and writes
 * bench-results/<timestamp>.json, latest.json and report.html. Missing a target does not fail.
 */
import { rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureDatabase } from "@herald/db";
import { DEFAULT_AMQP_URL, DEFAULT_DATABASE_URL } from "@herald/runtime/config";
import { createApps, deleteApps } from "./apps.ts";
import { bounds } from "./bound.ts";
import { type Build, baseBuild, thisBuild } from "./builds.ts";
import { type Ceilings, httpCeiling, postgresCeiling, rabbitmqCeiling } from "./ceilings.ts";
import { cleanUp, onCleanUp } from "./cleanup.ts";
import { alternation, compareRuns, type Role } from "./compare.ts";
import { cpuMeter, stackGroups } from "./cpu.ts";
import { type DbWaits, sampleDbWaits } from "./dbWaits.ts";
import { diskUse, logBytesAt } from "./diskUse.ts";
import { type HopBreakdown, hopBreakdown } from "./hops.ts";
import { forkLoadGenerator, type JobHooks, type LoadGenerator } from "./loadProcess.ts";
import { sampleMemory } from "./memory.ts";
import { parseOptions, USAGE } from "./options.ts";
import { type Profile, type ProfileName, prepareProfile } from "./profiles.ts";
import { progress, say } from "./progress.ts";
import type { ClosedLoopJob, Job, JobResult } from "./protocol.ts";
import { deleteStreams, pingRedis, REDIS_URL } from "./redisStreams.ts";
import { formatTable } from "./report.ts";
import { writeReports } from "./reportHtml.ts";
import {
  type Against,
  type BenchResults,
  type DestinationFigures,
  destinationFigures,
  endToEndFigures,
  ingestFigures,
  latencyFigures,
  loopRun,
  machine,
  neighbourFigures,
  type ProfileResults,
  type RunOf,
  type SustainedFigures,
  type TransformedBesidePlainFigures,
  transformedBesidePlainFigures,
} from "./results.ts";
import {
  destinationJobs,
  endToEndJobs,
  FULL,
  ingestJob,
  LATENCY_RATES,
  latencyJobs,
  neighbourJob,
  QUICK,
  SUSTAINED_SHARE,
  sustainedJob,
  systemWarmUpJob,
  transformedBesidePlainJob,
} from "./scenarios.ts";
import { runSoak } from "./soak.ts";
import type { SoakFigures } from "./soakFigures.ts";
import { backlogSampler, backlogVerdict } from "./sustained.ts";
import { benchDatabaseUrl, freshDatabase, runningSystem, type System, startSystem } from "./system.ts";
import { checkAgainst, checkTargets } from "./targets.ts";

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
/** With --against: rounds of each build per profile, alternating. */
const ROUNDS = 2;

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const names = options.target ? ["given" as const] : options.profiles;
  const kind = options.soak ? `soak of ${options.soak} minute(s)` : options.quick ? "quick run" : "full run";
  say(
    `${kind} (${options.quick && options.soak ? "quick warm-up, " : ""}${names.join(" and ")}${options.against ? `, against ${options.against}` : ""}); results go to ${relative(process.cwd(), resultsDir) || "."}/`,
  );
  // A run that needs Redis fails at once if it is not there, not after minutes of scenarios.
  if (options.destination) await pingRedis(REDIS_URL);
  const change = thisBuild(root);
  // Before anything starts: the base's worktree and install take a while the first time.
  const base = options.against ? await baseBuild(root, options.against, join(resultsDir, "worktrees")) : null;
  const load = await forkLoadGenerator();
  onCleanUp(load.kill, load.kill);

  if (options.target) await ensureDatabase(databaseUrl);
  else await freshDatabase(databaseUrl, change);
  const ceiling = durations.ceiling;
  const ceilings: Ceilings = {
    httpPostsPerSecond: await httpCeiling(load, ceiling, progress("ceiling: HTTP POSTs")),
    rabbitmqMessagesPerSecond: await rabbitmqCeiling(amqpUrl, ceiling, progress("ceiling: RabbitMQ")),
    postgresInsertsPerSecond: await postgresCeiling(databaseUrl, ceiling, progress("ceiling: Postgres")),
  };
  await rm(join(resultsDir, "logs"), { recursive: true, force: true });
  const profiles: ProfileResults[] = [];
  const soaks: SoakFigures[] = [];
  let against: Against | null = null;
  if (options.soak) {
    for (const name of options.profiles) {
      const profile = await prepare(name, change);
      const label = `${profile.name}: `;
      soaks.push(
        await runSoak({
          load,
          system: await launch(profile, change, null, label),
          profile,
          minutes: options.soak,
          durations,
          databaseUrl,
          label,
        }),
      );
    }
  } else if (options.target) profiles.push(await runProfile(load, ceilings, null, null));
  else if (!base) {
    for (const name of options.profiles)
      profiles.push(await runProfile(load, ceilings, await prepare(name, change), null, change));
  } else {
    const builds: Record<Role, Build> = { base, change };
    const prepared = new Map<string, Profile>();
    for (const slot of alternation(options.profiles, ROUNDS)) {
      const key = `${slot.profile} ${slot.build}`;
      if (!prepared.has(key)) prepared.set(key, await prepare(slot.profile, builds[slot.build]));
      const run: RunOf = { build: slot.build, round: slot.round, commit: builds[slot.build].commit };
      say(`━━ ${slot.profile}, round ${slot.round} of ${ROUNDS}: ${describeBuild(builds[slot.build])}`);
      profiles.push(await runProfile(load, ceilings, prepared.get(key)!, run, builds[slot.build]));
    }
    const comparisons = options.profiles.map((name) =>
      compareRuns(
        name,
        profiles
          .filter((p) => p.profile === name && p.run)
          .map((p) => ({ build: p.run!.build, round: p.run!.round, results: p })),
      ),
    );
    against = {
      base: { ref: base.ref, commit: base.commit },
      change: { commit: change.commit, dirty: change.dirty },
      rounds: ROUNDS,
      comparisons,
      targets: checkAgainst(comparisons),
    };
  }
  await cleanUp();
  const results: BenchResults = {
    version: 3,
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
    against,
    soak: options.soak ? soaks : null,
  };
  const files = await writeReports(results, resultsDir);
  console.log(`\n${formatTable(results)}\n`);
  say(`wrote ${files.map((f) => relative(root, f)).join(", ")}`);
}

function describeBuild(b: Build): string {
  return `${b.role} ${b.ref === "HEAD" ? "(this checkout)" : b.ref} at ${b.commit.slice(0, 10)}${b.dirty ? " with uncommitted changes" : ""}`;
}

/** A profile of `build`: the deployed one builds its services first, with that build's own script. */
async function prepare(name: Exclude<ProfileName, "given">, build: Build): Promise<Profile> {
  if (name === "deployed") say(`building the services of ${describeBuild(build)} as the images hold them…`);
  return prepareProfile(name, {
    build,
    buildDir: join(resultsDir, build.role === "change" ? "build" : "build-base"),
    logLevel: options.logLevel,
  });
}

/** A system of `build` started as `profile` says, on a fresh database. */
async function launch(profile: Profile, build: Build, run: RunOf | null, label: string): Promise<System> {
  await freshDatabase(databaseUrl, build);
  say(
    `${label}starting the api-gateway, ${options.dispatchers} dispatcher(s) and ${options.senders} sender(s)…`,
  );
  return startSystem({
    launch: profile.launch,
    build,
    databaseUrl,
    amqpUrl,
    dispatchers: options.dispatchers,
    senders: options.senders,
    logLevel: profile.logLevel,
    env: { ...profile.env, ...options.env },
    logDir: join(resultsDir, "logs", run ? `${profile.name}-${run.build}-${run.round}` : profile.name),
    cpuProfDir: options.cpuProf ? join(resultsDir, "profiles", profile.name) : null,
  });
}

/**
 * Every scenario on a system of `build` started as `profile` says (or the one given by --url
 * when null); `run` names the build and round with --against.
 */
async function runProfile(
  load: LoadGenerator,
  ceilings: Ceilings,
  profile: Profile | null,
  run: RunOf | null,
  build: Build | null = null,
): Promise<ProfileResults> {
  const label = profile ? `${profile.name}${run ? ` ${run.build} ${run.round}` : ""}: ` : "";
  let system: System;
  if (options.target) {
    say(`using the system at ${options.target.url}`);
    system = runningSystem(options.target.url, options.target.key);
  } else system = await launch(profile!, build!, run, label);
  load.init(system.gateway);
  const apps = await createApps(
    system.gateway,
    load.receiverPort,
    (line) => say(`${label}${line}`),
    options.destination ? REDIS_URL : null,
  );
  const streams = apps.destination?.redis.paths ?? [];
  // Also on an error or Ctrl-C; after the apps go (cleanup runs last first), so no retry remakes one.
  if (streams.length) onCleanUp(() => deleteStreams(REDIS_URL, streams).then(() => {}));
  // A system the benchmark did not start keeps running: its apps go once the run ends.
  if (options.target) onCleanUp(() => deleteApps(system.gateway, apps));
  const memory = sampleMemory(system.processes);
  // CPU is read only where the benchmark knows the service processes.
  const groups = options.target ? null : stackGroups(system.processes);

  /** Runs a job once the last one's backlog settled; `settled` runs in between (a sampler's start). */
  const step = async (
    name: string,
    job: Job,
    settled?: () => Promise<void>,
    hooks?: JobHooks,
  ): Promise<JobResult> => {
    await system.settle(durations.drainMs);
    await settled?.();
    return Promise.race([load.run(job, progress(`${label}${name}`), hooks), system.failed]);
  };
  /** A step whose window's CPU is read (cpu.ts), divided by the deliveries that arrived in it. */
  const measured = async (name: string, job: Job, settled?: () => Promise<void>, hooks: JobHooks = {}) => {
    const meter = groups ? cpuMeter(groups) : null;
    const result = await step(name, job, settled, {
      ...hooks,
      onWindow: (edge) => meter?.window(edge),
    });
    return { result, cpu: meter?.figures(result.deliveries?.arrivedInWindow ?? 0) ?? null };
  };
  await step("warming the system up", systemWarmUpJob(apps, durations));
  const endToEnd = [];
  for (const job of endToEndJobs(apps, durations)) {
    // What the scenario leaves on disk: only in a database the benchmark made.
    let before = 0;
    const { result, cpu } = await measured(
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
    endToEnd.push({ ...endToEndFigures(job, result, ceilings), disk, cpu });
  }
  // Issue 35's target: a transformed endpoint and a plain one, loaded at the same time.
  let transformedBesidePlain: TransformedBesidePlainFigures | null = null;
  const besidePlain = transformedBesidePlainJob(apps, durations);
  if (besidePlain) {
    const result = await step("end-to-end, 1 endpoint transformed beside 1 plain", besidePlain);
    transformedBesidePlain = transformedBesidePlainFigures(besidePlain, result, ceilings);
  }
  let destination: DestinationFigures | null = null;
  if (apps.destination) {
    const { http, redis } = destinationJobs(apps.destination, durations);
    const closed = async (job: ClosedLoopJob) => {
      const { result, cpu } = await measured(`destinations, ${job.label}`, job);
      return loopRun(job, result, ceilings, cpu);
    };
    destination = destinationFigures(await closed(http), await closed(redis));
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

  // Sustained: 80 % of what this run's closed loop with 1 endpoint delivered.
  let sustained: SustainedFigures | null = null;
  const capacity = endToEnd.find((e) => e.endpoints === 1)?.deliveriesPerSecond ?? 0;
  if (capacity > 0) {
    const job = sustainedJob(apps, durations, capacity);
    const endpointId = apps.one.endpointIds[0]!;
    const sampler = backlogSampler(() => system.backlog(endpointId));
    const { result, cpu } = await measured(
      `sustained at ${job.rate} events/s (${SUSTAINED_SHARE * 100} % of ${Math.round(capacity)})`,
      job,
      undefined,
      sampler.hooks,
    );
    const samples = sampler.samples();
    const window = { from: job.warmMs / 1000, to: (job.warmMs + job.measureMs) / 1000 };
    sustained = {
      ...latencyFigures(job, result),
      capacity,
      share: SUSTAINED_SHARE,
      samples,
      backlog: backlogVerdict(samples, window, job.rate),
      cpu,
    };
  }

  const ingest = ingestJob(apps, durations);
  const ingestResult = ingestFigures(ingest, await step("ingest", ingest), ceilings);

  const peaks = memory.finish();
  if (!options.target) say(`${label}stopping the services…`);
  await system.stop();
  if (streams.length) await deleteStreams(REDIS_URL, streams);
  const figures: Omit<ProfileResults, "targets"> = {
    profile: profile?.name ?? "given",
    run,
    description: profile?.description ?? `the system at ${options.target?.url}`,
    ingest: ingestResult,
    endToEnd,
    transformedBesidePlain,
    destination,
    latency,
    neighbour,
    sustained,
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
