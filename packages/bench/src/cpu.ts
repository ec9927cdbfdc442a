import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time per delivery: how much processor each part of the stack spent on a scenario's
 * measured window, divided by the deliveries that arrived in it.
 *
 * The method. Linux counts each process's CPU time in `/proc/<pid>/stat`, in clock ticks
 * (`getconf CLK_TCK`, 100 a second here): field 14 `utime` and 15 `stime` (its own threads,
 * user and kernel), 16 `cutime` and 17 `cstime` (the children it has waited for), 4 `ppid`,
 * and field 22 `starttime`, when it started, in ticks since boot. At the window's start and at
 * its end the benchmark reads the stat of every process (`snapshot`) along with the time since
 * boot (`/proc/uptime`), and sorts them into groups: each Herald service by its pid (known: the
 * benchmark started them), PostgreSQL by name (every process whose `comm`, field 2, the same
 * as /proc/<pid>/comm, is `postgres`: the postmaster, each backend and background worker, of
 * every database on the server) and the broker (RabbitMQ's Erlang VM, `beam.smp`). A group's
 * CPU in the window (`groupTicks`) is then, over the processes of the group at the end:
 *
 * - one seen at both ends (same pid and same starttime): its utime + stime + cutime + cstime
 *   at the end minus the same at the start;
 * - one not seen at the start that started after the window started (starttime ≥ the uptime
 *   read first at the start): all of it, counted from 0 (a backend that connected meanwhile);
 * - one not seen at the start that started before (it began while the start was being read):
 *   not counted, as its time before the window cannot be told apart; `missed` says how many;
 *
 * minus, for each process of the group seen at the start and gone at the end whose parent is in
 * the group at both ends (a backend whose connection closed: the postmaster waits for it), its
 * utime + stime + cutime + cstime at the start. The parent's cutime + cstime took in all of the
 * exited one's time when it waited for it, and only what it spent after the start belongs to the
 * window. A process that exited without such a parent is lost with what it spent in the window
 * (`lost` counts them; none in a steady run, where Herald's pools keep their connections).
 * A pid reused by another process reads as one exit and one start (different starttimes).
 *
 * Ticks are 10 ms, so each process's figure is good to about 10 ms over the window: 0.3 % of a
 * core in a 3 s window. The benchmark's own processes (main, the load generator) are in no group.
 */

export type ProcStat = {
  pid: number;
  comm: string;
  ppid: number;
  /** utime + stime: its own threads' CPU, in ticks. */
  ownTicks: number;
  /** cutime + cstime: its waited-for children's, in ticks. */
  childTicks: number;
  /** When it started, in ticks since boot. */
  startTicks: number;
};

/**
 * Parses the text of `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may
 * itself hold spaces and parentheses: the fields after it are counted from the last `)`.
 */
export function parseStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const stat = {
    pid,
    comm,
    ppid: field(4),
    ownTicks: field(14) + field(15),
    childTicks: field(16) + field(17),
    startTicks: field(22),
  };
  return [stat.pid, stat.ppid, stat.ownTicks, stat.childTicks, stat.startTicks].every(Number.isFinite)
    ? stat
    : null;
}

/** Every process's stat at one moment, and the time since boot read just before, in ticks. */
export type Snapshot = { uptimeTicks: number; processes: Map<number, ProcStat> };

/** A part of the stack: which processes of a snapshot belong to it. */
export type Group = { name: string; includes: (p: ProcStat) => boolean };

export const byPid = (name: string, pid: number): Group => ({ name, includes: (p) => p.pid === pid });
export const byComm = (name: string, comm: string): Group => ({ name, includes: (p) => p.comm === comm });

/** A group's CPU between two snapshots, in ticks, by the method above. */
export function groupTicks(
  group: Group,
  start: Snapshot,
  end: Snapshot,
): { ticks: number; missed: number; lost: number } {
  const total = (p: ProcStat) => p.ownTicks + p.childTicks;
  const inGroup = (s: Snapshot) => {
    const m = new Map<number, ProcStat>();
    for (const p of s.processes.values()) if (group.includes(p)) m.set(p.pid, p);
    return m;
  };
  const before = inGroup(start);
  const after = inGroup(end);
  const same = (a: ProcStat | undefined, b: ProcStat | undefined) =>
    a !== undefined && b !== undefined && a.startTicks === b.startTicks;
  let ticks = 0;
  let missed = 0;
  let lost = 0;
  for (const p of after.values()) {
    const was = before.get(p.pid);
    if (same(was, p)) ticks += total(p) - total(was!);
    else if (p.startTicks >= start.uptimeTicks) ticks += total(p);
    else missed++;
  }
  for (const p of before.values()) {
    if (same(p, after.get(p.pid))) continue;
    // Exited (or its pid reused): its time went to its parent's cutime + cstime when waited for.
    if (same(before.get(p.ppid), after.get(p.ppid))) ticks -= total(p);
    else lost++;
  }
  return { ticks, missed, lost };
}

/** Clock ticks a second (`getconf CLK_TCK`); 100 on Linux unless the kernel says otherwise. */
export const CLOCK_TICKS: number = (() => {
  const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const n = Number(out.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** Reads every process's stat now. A process that exits while being read is skipped. */
export function snapshot(): Snapshot {
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  const processes = new Map<number, ProcStat>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const stat = parseStat(text);
    if (stat) processes.set(stat.pid, stat);
  }
  return { uptimeTicks: Math.floor(uptime * CLOCK_TICKS), processes };
}

/** One part's CPU over the window, in ms, and per delivery. */
export type CpuShare = { name: string; cpuMs: number; perDeliveryMs: number | null };

export type CpuFigures = {
  windowSeconds: number;
  /** Deliveries that arrived in the window: the divisor. */
  deliveries: number;
  /** Each Herald process, then `postgres` and `rabbitmq`. */
  parts: CpuShare[];
  /** Their sum. */
  wholeStack: CpuShare;
  /** The whole stack's CPU over the window's length: cores kept busy (of the machine's). */
  cores: number;
  /** Processes not counted (see cpu.ts): started while the start was read, or exited without a parent in their group. */
  missed: number;
  lost: number;
};

/** The figures of a window from its two snapshots and the deliveries that arrived in it. */
export function cpuFigures(
  groups: Group[],
  start: Snapshot,
  end: Snapshot,
  windowMs: number,
  deliveries: number,
  ticksPerSecond = CLOCK_TICKS,
): CpuFigures {
  const msPerTick = 1000 / ticksPerSecond;
  const perDelivery = (ms: number) => (deliveries > 0 ? round3(ms / deliveries) : null);
  let missed = 0;
  let lost = 0;
  const parts = groups.map((g) => {
    const r = groupTicks(g, start, end);
    missed += r.missed;
    lost += r.lost;
    const cpuMs = r.ticks * msPerTick;
    return { name: g.name, cpuMs, perDeliveryMs: perDelivery(cpuMs) };
  });
  const sum = parts.reduce((s, p) => s + p.cpuMs, 0);
  return {
    windowSeconds: Math.round(windowMs) / 1000,
    deliveries,
    parts,
    wholeStack: { name: "whole stack", cpuMs: sum, perDeliveryMs: perDelivery(sum) },
    cores: windowMs > 0 ? round3(sum / windowMs) : 0,
    missed,
    lost,
  };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** The groups of a system the benchmark started: each service's process, PostgreSQL, the broker. */
export function stackGroups(processes: { label: string; pid: number }[]): Group[] {
  return [
    ...processes.map((p) => byPid(p.label, p.pid)),
    byComm("postgres", "postgres"),
    byComm("rabbitmq", "beam.smp"),
  ];
}

/**
 * Takes a snapshot when the load generator says the window starts and another when it ends;
 * `figures` then divides by the deliveries that arrived in between.
 */
export function cpuMeter(groups: Group[]) {
  let start: { at: number; snap: Snapshot } | null = null;
  let end: { at: number; snap: Snapshot } | null = null;
  return {
    window(edge: "start" | "end"): void {
      const at = performance.now();
      const snap = snapshot();
      if (edge === "start") start = { at, snap };
      else end = { at, snap };
    },
    figures(deliveries: number): CpuFigures | null {
      if (!start || !end) return null;
      return cpuFigures(groups, start.snap, end.snap, end.at - start.at, deliveries);
    },
  };
}
