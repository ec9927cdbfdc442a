import pg from "pg";
import { createApps } from "./apps.ts";
import type { JobHooks, LoadGenerator } from "./loadProcess.ts";
import { memoryOfComm, readMemory } from "./memory.ts";
import type { Profile } from "./profiles.ts";
import { progress, say } from "./progress.ts";
import type { Job, JobResult, SoakJob } from "./protocol.ts";
import { deliveredOverAccepted } from "./results.ts";
import { type Durations, endToEndJobs, SUSTAINED_SHARE, sustainedJob, systemWarmUpJob } from "./scenarios.ts";
import {
  MINUTE_MS,
  MinuteBuckets,
  type MinuteCounts,
  minuteHeader,
  minuteLine,
  type SoakFigures,
  type SoakMinute,
  soakVerdict,
  verdictLine,
} from "./soakFigures.ts";
import { perSecond, round } from "./stats.ts";
import { backlogSampler, backlogVerdict } from "./sustained.ts";
import { type System, vacuum } from "./system.ts";

/**
 * `npm run bench -- --soak <minutes>`: on a system started as `profile` says, warms it up and
 * measures its closed loop with 1 endpoint as the full run does, then offers the sustained
 * scenario's load (80 % of that capacity, an open loop to that endpoint) for `minutes`. At each
 * minute's end it prints a line (soakFigures.ts): the minute's events accepted and deliveries
 * arrived, their 201 → arrival p50 and p99, the backlog as sustained.ts reads it, and the
 * resident memory of each Herald process, of PostgreSQL and of RabbitMQ (memory.ts: their shared
 * memory counted once); at the end, first minute against last.
 * PostgreSQL's autovacuum may be off on this machine (a CI configuration): then the lifecycle's
 * tables are vacuumed each minute, as autovacuum would in a deployment, since their dead rows
 * would otherwise slow the release gate minute by minute, a drift of the machine, not of Herald.
 */
export type SoakRun = {
  load: LoadGenerator;
  system: System;
  profile: Profile;
  minutes: number;
  durations: Durations;
  databaseUrl: string;
  /** Prefixes the run's lines (`lean: `). */
  label: string;
};

export async function runSoak(o: SoakRun): Promise<SoakFigures> {
  const { load, system, durations, label } = o;
  load.init(system.gateway);
  const apps = await createApps(system.gateway, load.receiverPort, (line) => say(`${label}${line}`));
  const step = async (name: string, job: Job, hooks?: JobHooks): Promise<JobResult> => {
    await system.settle(durations.drainMs);
    return Promise.race([load.run(job, progress(`${label}${name}`), hooks), system.failed]);
  };
  await step("warming the system up", systemWarmUpJob(apps, durations));
  const closed = endToEndJobs(apps, durations)[0]!;
  const measured = await step("end-to-end, 1 endpoint (the capacity the soak takes a share of)", closed);
  const capacity = perSecond(measured.deliveries?.arrivedInWindow ?? 0, closed.measureMs);
  if (!(capacity > 0))
    throw new Error("the closed loop with 1 endpoint delivered nothing: no load to soak with");
  const job: SoakJob = {
    ...sustainedJob(apps, durations, capacity),
    kind: "soak",
    measureMs: o.minutes * MINUTE_MS,
  };

  const vacuumEachMinute = !(await autovacuumOn(o.databaseUrl));
  const endpointId = apps.one.endpointIds[0]!;
  const names = [...system.processes.map((p) => p.label), "postgres", "rabbitmq"];
  const sampler = backlogSampler(() => system.backlog(endpointId));
  const buckets = new MinuteBuckets(job.warmMs, o.minutes);
  const rows: SoakMinute[] = [];
  let minuteEnds = Promise.resolve();
  let vacuuming = false;
  /** A minute ended: its memory read now, its backlog's read (a query) awaited in order, then its line. */
  const ended = (counts: MinuteCounts) => {
    const memory = memoryNow(system.processes);
    minuteEnds = minuteEnds.then(async () => {
      const b = await system.backlog(endpointId).catch(() => null);
      const row: SoakMinute = {
        ...counts,
        queued: b?.queued ?? null,
        open: b?.open ?? null,
        backlog: b ? b.queued + b.open : null,
        ...memory,
      };
      rows.push(row);
      say(`${label}${minuteLine(row, names)}`);
    });
    if (vacuumEachMinute && !vacuuming && counts.minute < o.minutes) {
      vacuuming = true;
      vacuum(o.databaseUrl)
        .catch((err) => say(`${label}vacuum failed: ${err}`))
        .finally(() => {
          vacuuming = false;
        });
    }
  };
  const hooks: JobHooks = {
    onTick(tick) {
      sampler.hooks.onTick?.(tick);
      if (tick.samples) buckets.add(tick.samples);
      for (const counts of buckets.close(tick.atMs)) ended(counts);
    },
  };
  say(
    `${label}soak: ${job.rate} events/s to 1 endpoint (${SUSTAINED_SHARE * 100} % of ${Math.round(capacity)}) for ${o.minutes} minute(s)${vacuumEachMinute ? ", vacuuming the lifecycle's tables each minute (autovacuum is off)" : ""}; at each minute's end:`,
  );
  say(`${label}${minuteHeader(names)}`);
  const result = await step(`soak at ${job.rate} events/s`, job, hooks);
  // The report that closes the last minute comes as the drain starts; a job that drained at once
  // may have ended before it.
  for (const counts of buckets.close(Number.POSITIVE_INFINITY)) ended(counts);
  await minuteEnds;

  const window = { from: job.warmMs / 1000, to: (job.warmMs + job.measureMs) / 1000 };
  // The trend over the soak's second half, not only its last 20 s: a slow drift shows there.
  const backlog = backlogVerdict(sampler.samples(), window, job.rate, Number.POSITIVE_INFINITY);
  const verdict = soakVerdict(rows, backlog);
  say(`${label}${verdictLine(verdict, rows.length)}`);
  const peakMb = system.processes.map((p) => ({
    service: p.label,
    peakMb: round(readMemory(p.pid)?.peakMb ?? Number.NaN, 1),
  }));
  const d = result.deliveries!;
  say(`${label}stopping the services…`);
  await system.stop();
  return {
    profile: o.profile.name,
    description: o.profile.description,
    minutes: o.minutes,
    capacity,
    share: SUSTAINED_SHARE,
    rate: job.rate,
    warmSeconds: job.warmMs / 1000,
    vacuumEachMinute,
    eventsAcceptedPerSecond: perSecond(result.requests.inWindow, job.measureMs),
    deliveredOverAccepted: deliveredOverAccepted(d.arrivedInWindow, result.requests.inWindow, 1),
    notSent: result.requests.notSent,
    expected: d.expected,
    arrived: d.arrived,
    duplicates: d.duplicates,
    unmatched: d.unmatched ?? 0,
    lost: d.lost,
    drainSeconds: d.drainSeconds,
    rows,
    peakMb: peakMb.map((p) => ({ ...p, peakMb: Number.isFinite(p.peakMb) ? p.peakMb : null })),
    verdict,
    serviceOutput: system.output(),
    errors: result.requests.errors,
    errorSamples: result.requests.errorSamples,
  };
}

/**
 * VmRSS in MB of each Herald process, then PostgreSQL's and RabbitMQ's (every `postgres` and
 * `beam.smp` process) with shared memory counted once, and their VmRSS summed as they are.
 */
function memoryNow(
  processes: readonly { label: string; pid: number }[],
): Pick<SoakMinute, "rssMb" | "summedRssMb"> {
  const rssMb: Record<string, number | null> = {};
  const summedRssMb: Record<string, number | null> = {};
  for (const p of processes) {
    const m = readMemory(p.pid);
    rssMb[p.label] = m ? round(m.rssMb, 1) : null;
  }
  for (const [name, comm] of [
    ["postgres", "postgres"],
    ["rabbitmq", "beam.smp"],
  ] as const) {
    const m = memoryOfComm(comm);
    rssMb[name] = m ? round(m.residentMb, 1) : null;
    summedRssMb[name] = m ? round(m.summedRssMb, 1) : null;
  }
  return { rssMb, summedRssMb };
}

async function autovacuumOn(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ autovacuum: string }>("SHOW autovacuum");
    return rows[0]?.autovacuum === "on";
  } finally {
    await client.end();
  }
}
