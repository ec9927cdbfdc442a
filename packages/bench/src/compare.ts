import type { ProfileName } from "./profiles.ts";
import type { ProfileResults } from "./results.ts";

/**
 * `--against <ref>`: the same scenarios on two builds, `base` (the ref) and `change` (this
 * checkout), alternating so that a machine slower for a while slows both alike: per profile,
 * base, change, base, change. Each figure is then compared as the mean of a build's rounds,
 * change ÷ base.
 */
export type Role = "base" | "change";
export type RunSlot<P extends string = ProfileName> = { profile: P; build: Role; round: number };

/** The order the runs go in: each profile in turn, its rounds alternating base then change. */
export function alternation<P extends string>(profiles: readonly P[], rounds: number): RunSlot<P>[] {
  const order: RunSlot<P>[] = [];
  for (const profile of profiles)
    for (let round = 1; round <= rounds; round++)
      for (const build of ["base", "change"] as const) order.push({ profile, build, round });
  return order;
}

/**
 * One figure of one run: which way is better, for reading the ratio; `signed` for a figure that
 * may be below zero (a trend), whose ratio means nothing and is left out.
 */
export type Figure = {
  name: string;
  unit: string;
  better: "higher" | "lower" | null;
  value: number | null;
  signed?: boolean;
};

/** Every figure of a run that has a number, in the order the report prints them. */
export function figuresOf(p: ProfileResults): Figure[] {
  const out: Figure[] = [];
  const add = (
    name: string,
    unit: string,
    better: Figure["better"],
    value: number | null | undefined,
    signed = false,
  ) => out.push({ name, unit, better, value: value ?? null, ...(signed ? { signed } : {}) });
  add("ingest", "events/s", "higher", p.ingest.eventsPerSecond);
  for (const e of p.endToEnd) {
    add(`end-to-end, ${e.name}`, "deliveries/s", "higher", e.deliveriesPerSecond);
    add(`end-to-end, ${e.name}: delivered ÷ accepted`, "", "higher", e.deliveredOverAccepted);
    add(`end-to-end, ${e.name}: lost`, "deliveries", "lower", e.lost);
  }
  // Absent from results written before the scenario, null where the API refused transformations.
  const b = p.transformedBesidePlain;
  if (b) {
    for (const [name, r] of [
      ["transformed", b.transformed],
      ["plain", b.plain],
    ] as const) {
      add(`transformed beside plain, ${name}`, "deliveries/s", "higher", r.deliveriesPerSecond);
      add(`transformed beside plain, ${name}: p50`, "ms", "lower", r.p50Ms);
      add(`transformed beside plain, ${name}: p99`, "ms", "lower", r.p99Ms);
      add(`transformed beside plain, ${name}: lost`, "deliveries", "lower", r.lost);
    }
    add(
      "transformed beside plain, transformed ÷ plain",
      "",
      "higher",
      b.transformedOverPlain.deliveriesPerSecond,
    );
    add("transformed beside plain, transformed ÷ plain: p50", "", "lower", b.transformedOverPlain.p50);
  }
  const cpuOf = [
    ...p.endToEnd.map((e) => ({ name: `end-to-end, ${e.name}`, cpu: e.cpu })),
    { name: "sustained", cpu: p.sustained?.cpu ?? null },
  ];
  for (const { name, cpu } of cpuOf) {
    if (!cpu) continue;
    add(`CPU per delivery, ${name}: whole stack`, "ms", "lower", cpu.wholeStack.perDeliveryMs);
    for (const part of cpu.parts)
      add(`CPU per delivery, ${name}: ${part.name}`, "ms", "lower", part.perDeliveryMs);
  }
  const d = p.destination;
  if (d) {
    for (const [name, r] of [
      ["HTTP", d.http],
      ["Redis Streams", d.redis],
    ] as const) {
      add(`destinations, ${name}`, "deliveries/s", "higher", r.deliveriesPerSecond);
      add(`destinations, ${name}: p99`, "ms", "lower", r.p99Ms);
    }
    add("destinations, Redis ÷ HTTP", "", "higher", d.redisOverHttp.deliveriesPerSecond);
  }
  for (const l of p.latency) {
    const at = `at ${l.rate.toLocaleString("en-US")} events/s`;
    add(`accepted ${at}`, "events/s", "higher", l.eventsAcceptedPerSecond);
    add(`p50 ${at}`, "ms", "lower", l.p50Ms);
    add(`p95 ${at}`, "ms", "lower", l.p95Ms);
    add(`p99 ${at}`, "ms", "lower", l.p99Ms);
  }
  const { healthy, hanging } = p.neighbour;
  add("beside a hanging endpoint: p50", "ms", "lower", healthy.p50Ms);
  add("beside a hanging endpoint: p99", "ms", "lower", healthy.p99Ms);
  add("beside a hanging endpoint: lost", "deliveries", "lower", healthy.lost + hanging.lost);
  add("hanging endpoint: most attempts in flight", "", null, hanging.mostInFlight);
  const s = p.sustained;
  if (s) {
    add("sustained: offered", "events/s", null, s.rate);
    add("sustained: delivered ÷ accepted", "", "higher", s.deliveredOverAccepted);
    add("sustained: backlog max", "", "lower", s.backlog.max);
    add("sustained: backlog last", "", "lower", s.backlog.last);
    add("sustained: backlog trend", "/s", "lower", s.backlog.slopePerSecond, true);
    add("sustained: p50", "ms", "lower", s.p50Ms);
    add("sustained: p99", "ms", "lower", s.p99Ms);
    add("sustained: lost", "deliveries", "lower", s.lost);
  }
  for (const e of p.endToEnd)
    if (e.disk) add(`on disk per delivery, ${e.name}`, "bytes", "lower", e.disk.bytesPerDelivery);
  for (const m of p.memory) add(`peak memory, ${m.service}`, "MB", "lower", m.peakMb);
  return out;
}

export type ComparisonRow = Omit<Figure, "value"> & {
  /** Each round's value, round 1 first; null where that run has no such figure. */
  base: (number | null)[];
  change: (number | null)[];
  baseMean: number | null;
  changeMean: number | null;
  /** changeMean ÷ baseMean; null when either is missing or the base's is 0. */
  ratio: number | null;
};

export type Comparison = { profile: ProfileName; rounds: number; rows: ComparisonRow[] };

/** The mean of the values there are; null when there are none. */
export function mean(values: readonly (number | null)[]): number | null {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return present.length ? present.reduce((s, v) => s + v, 0) / present.length : null;
}

/** Every figure of one profile's runs, base and change side by side, each round, with change ÷ base. */
export function compareRuns(
  profile: ProfileName,
  runs: readonly { build: Role; round: number; results: ProfileResults }[],
): Comparison {
  const rounds = Math.max(0, ...runs.map((r) => r.round));
  const rows = new Map<string, ComparisonRow>();
  // Rows in the order figures first appear, the change's runs first, then any only the base has.
  const ordered = [...runs].sort((a, b) =>
    a.build === b.build ? a.round - b.round : a.build === "change" ? -1 : 1,
  );
  for (const run of ordered) {
    for (const f of figuresOf(run.results)) {
      let row = rows.get(f.name);
      if (!row) {
        row = {
          name: f.name,
          unit: f.unit,
          better: f.better,
          ...(f.signed ? { signed: true } : {}),
          base: Array(rounds).fill(null),
          change: Array(rounds).fill(null),
          baseMean: null,
          changeMean: null,
          ratio: null,
        };
        rows.set(f.name, row);
      }
      row[run.build][run.round - 1] = f.value;
    }
  }
  for (const row of rows.values()) {
    row.baseMean = mean(row.base);
    row.changeMean = mean(row.change);
    row.ratio =
      !row.signed && row.baseMean !== null && row.changeMean !== null && row.baseMean !== 0
        ? row.changeMean / row.baseMean
        : null;
  }
  return { profile, rounds, rows: [...rows.values()] };
}
