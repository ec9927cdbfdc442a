import type { ProfileName } from "./profiles.ts";
import type { SoakSamples } from "./protocol.ts";
import type { Errors } from "./results.ts";
import type { ServiceOutput } from "./services.ts";
import { percentile, round } from "./stats.ts";
import type { BacklogVerdict } from "./sustained.ts";

/** A soak's figures (soak.ts runs it): per minute, and first against last. Pure; no I/O here. */

export const MINUTE_MS = 60_000;

/** What the load generator saw in one minute of the soak (1 is the first after the warm-up). */
export type MinuteCounts = {
  minute: number;
  /** Events that got their 201 in the minute. */
  accepted: number;
  /** Deliveries of accepted events that arrived in the minute. */
  delivered: number;
  deliveredOverAccepted: number | null;
  /** 201 → arrival of the deliveries that arrived in the minute; null when none did. */
  p50Ms: number | null;
  p99Ms: number | null;
};

/** A minute's counts, and what the system held at its end. */
export type SoakMinute = MinuteCounts & {
  /** As sustained.ts reads it: messages ready in the queues + the endpoint's open deliveries; null if unread. */
  queued: number | null;
  open: number | null;
  backlog: number | null;
  /**
   * Resident memory in MB at the minute's end: each Herald process's VmRSS by its label, then
   * `postgres` and `rabbitmq`, every process of each, their shared memory counted once (memory.ts).
   */
  rssMb: Record<string, number | null>;
  /** `postgres` and `rabbitmq`: their processes' VmRSS summed as they are, shared pages once per process. */
  summedRssMb: Record<string, number | null>;
};

/** A minute's counts from its events accepted and its deliveries' latencies. */
export function minuteCounts(minute: number, accepted: number, latenciesMs: readonly number[]): MinuteCounts {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? round(percentile(sorted, p), 2) : null);
  return {
    minute,
    accepted,
    delivered: sorted.length,
    deliveredOverAccepted: accepted > 0 ? round(sorted.length / accepted, 4) : null,
    p50Ms: at(50),
    p99Ms: at(99),
  };
}

/**
 * Sorts the load generator's samples into the soak's minutes: minute i holds what happened from
 * `startMs + i` minutes (ms since the job started; the warm-up before is left out) to the next.
 * A minute is closed once a report at or past its end came (each report carries everything up to
 * its own time), and then only its counts are kept. A sample for a minute already closed (one a
 * report's rounding left for the next) goes to the first open one; none is dropped in the window.
 */
export class MinuteBuckets {
  private readonly open = new Map<number, { accepted: number; latenciesMs: number[] }>();
  private closed = 0;

  constructor(
    private readonly startMs: number,
    private readonly minutes: number,
  ) {}

  add(samples: SoakSamples): void {
    for (const at of samples.accepted) {
      const i = this.slot(at);
      if (i !== null) this.bucket(i).accepted++;
    }
    samples.arrived.forEach((at, k) => {
      const i = this.slot(at);
      if (i !== null) this.bucket(i).latenciesMs.push(samples.latenciesMs[k]!);
    });
  }

  /** The minutes that ended by `atMs` and were not closed yet, in order. */
  close(atMs: number): MinuteCounts[] {
    const out: MinuteCounts[] = [];
    while (this.closed < this.minutes && atMs >= this.startMs + (this.closed + 1) * MINUTE_MS) {
      const b = this.open.get(this.closed);
      this.open.delete(this.closed);
      out.push(minuteCounts(this.closed + 1, b?.accepted ?? 0, b?.latenciesMs ?? []));
      this.closed++;
    }
    return out;
  }

  private slot(atMs: number): number | null {
    const i = Math.floor((atMs - this.startMs) / MINUTE_MS);
    if (i < 0) return null;
    const j = Math.max(i, this.closed);
    return j < this.minutes ? j : null;
  }

  private bucket(i: number) {
    let b = this.open.get(i);
    if (!b) {
      b = { accepted: 0, latenciesMs: [] };
      this.open.set(i, b);
    }
    return b;
  }
}

/** First minute against last: each process's RSS, the p99, and the backlog's verdict over the soak. */
export type SoakVerdict = {
  rss: { name: string; firstMb: number | null; lastMb: number | null; growthMb: number | null }[];
  p99: { firstMs: number | null; lastMs: number | null };
  backlog: BacklogVerdict;
};

export function soakVerdict(rows: readonly SoakMinute[], backlog: BacklogVerdict): SoakVerdict {
  const first = rows[0];
  const last = rows[rows.length - 1];
  const names = Object.keys(first?.rssMb ?? {});
  return {
    rss: names.map((name) => {
      const a = first?.rssMb[name] ?? null;
      const b = last?.rssMb[name] ?? null;
      return { name, firstMb: a, lastMb: b, growthMb: a !== null && b !== null ? round(b - a, 1) : null };
    }),
    p99: { firstMs: first?.p99Ms ?? null, lastMs: last?.p99Ms ?? null },
    backlog,
  };
}

export type SoakFigures = {
  profile: ProfileName;
  description: string;
  minutes: number;
  /** The closed loop's deliveries per second with 1 endpoint, measured first, and the share of it offered. */
  capacity: number;
  share: number;
  rate: number;
  warmSeconds: number;
  /** Whether the benchmark vacuumed the lifecycle's tables each minute (PostgreSQL's autovacuum being off). */
  vacuumEachMinute: boolean;
  /** Over the whole soak: events accepted a second, and deliveries arrived ÷ events accepted. */
  eventsAcceptedPerSecond: number;
  deliveredOverAccepted: number | null;
  notSent: number;
  expected: number;
  arrived: number;
  duplicates: number;
  unmatched: number;
  lost: number;
  drainSeconds: number;
  rows: SoakMinute[];
  /** VmHWM of each Herald process at the end. */
  peakMb: { service: string; peakMb: number | null }[];
  verdict: SoakVerdict;
  serviceOutput: ServiceOutput[];
} & Errors;

const mb = (v: number | null) => (v === null ? "–" : v.toFixed(0));
const msCell = (v: number | null) => (v === null ? "–" : v.toFixed(1));

function columns(names: readonly string[]): string[] {
  return ["minute", "accepted", "delivered", "dlv÷acc", "p50 ms", "p99 ms", "backlog", ...names];
}

function line(cells: readonly string[], names: readonly string[]): string {
  const widths = columns(names).map((c) => Math.max(c.length, 7));
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
}

/** The per-minute table's header: the minute's counts and latency, then each process's RSS (MB). */
export function minuteHeader(names: readonly string[]): string {
  return line(columns(names), names);
}

/** One minute as a line under `minuteHeader(names)`. */
export function minuteLine(m: SoakMinute, names: readonly string[]): string {
  return line(
    [
      String(m.minute),
      String(m.accepted),
      String(m.delivered),
      m.deliveredOverAccepted === null ? "–" : m.deliveredOverAccepted.toFixed(3),
      msCell(m.p50Ms),
      msCell(m.p99Ms),
      m.backlog === null ? "–" : String(m.backlog),
      ...names.map((n) => mb(m.rssMb[n] ?? null)),
    ],
    names,
  );
}

/** The verdict as one line: RSS and p99 from the first minute to the last, and the backlog. */
export function verdictLine(v: SoakVerdict, minutes: number): string {
  const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(1)}`;
  const rss = v.rss
    .map(
      (r) =>
        `${r.name} ${mb(r.firstMb)} → ${mb(r.lastMb)} MB${r.growthMb === null ? "" : ` (${signed(r.growthMb)})`}`,
    )
    .join(", ");
  const { firstMs, lastMs } = v.p99;
  const p99 = `p99 ${msCell(firstMs)} → ${msCell(lastMs)} ms${firstMs && lastMs ? ` (${(lastMs / firstMs).toFixed(2)}×)` : ""}`;
  const b = v.backlog;
  const trend = `${b.slopePerSecond >= 0 ? "+" : ""}${b.slopePerSecond}/s over the last ${b.tailSeconds} s, bounded ≤ ${b.limitPerSecond}/s`;
  const backlog =
    b.bounded === null
      ? `backlog: too few samples for a verdict`
      : `backlog ${b.bounded ? "bounded" : "growing"} (${trend}; ${b.min} to ${b.max}, last ${b.last})`;
  return `minute 1 → ${minutes}: RSS ${rss}; ${p99}; ${backlog}`;
}

/** A soak's section of the terminal's table (report.ts). */
export function soakLines(s: SoakFigures): string[] {
  const names = Object.keys(s.rows[0]?.rssMb ?? {});
  const lines = [
    `\n━━ soak, ${s.profile}: ${s.description}`,
    `\n${s.rate} events/s to 1 endpoint (${Math.round(s.share * 100)} % of the ${Math.round(s.capacity)}/s its closed loop delivered) for ${s.minutes} minute(s)${s.vacuumEachMinute ? "; the lifecycle's tables vacuumed each minute (autovacuum is off)" : ""}`,
    "Each minute: events accepted, deliveries arrived, 201 → arrival of those; at its end the backlog and resident memory",
    "(MB: each service's VmRSS; PostgreSQL's and RabbitMQ's processes together, their shared memory counted once)",
    `  ${minuteHeader(names)}`,
    ...s.rows.map((m) => `  ${minuteLine(m, names)}`),
    `\n  ${verdictLine(s.verdict, s.rows.length)}`,
    `  over the soak: ${s.eventsAcceptedPerSecond}/s accepted, delivered ÷ accepted ${s.deliveredOverAccepted?.toFixed(3) ?? "–"}, ${s.lost} lost${s.duplicates ? `, ${s.duplicates} duplicates` : ""}${s.unmatched ? `, ${s.unmatched} unmatched` : ""}${s.notSent ? `, ${s.notSent} not sent` : ""}`,
  ];
  if (s.peakMb.length)
    lines.push(`  peak (VmHWM): ${s.peakMb.map((p) => `${p.service} ${mb(p.peakMb)} MB`).join(", ")}`);
  if (s.errors) lines.push(`  ${s.errors} event POSTs failed; see errorSamples in the JSON.`);
  for (const o of s.serviceOutput.filter((x) => x.problems > 0))
    lines.push(`  ${o.service}: ${o.problems} lines at warn or above (${o.log})`);
  return lines;
}
