import type { Comparison } from "./compare.ts";
import type { CpuFigures } from "./cpu.ts";
import { dbWaitLines } from "./dbWaits.ts";
import { hopLines } from "./hops.ts";
import type { Against, BenchResults, LatencyFigures, LoopRun, ProfileResults, Ratios } from "./results.ts";
import { soakLines } from "./soakFigures.ts";
import { TARGETS, type TargetCheck } from "./targets.ts";

/** The figures as a table for the terminal (reportHtml.ts writes them as JSON and an HTML page). */

export const n = (v: number) => Math.round(v).toLocaleString("en-US");
export const ms = (v: number) => `${v.toFixed(1)} ms`;
const ratio = (r: Ratios) => [r.http, r.rabbitmq, r.postgres].map((x) => x.toFixed(3));
const mark = (pass: boolean | null) => (pass === null ? "–" : pass ? "✓ pass" : "✗ miss");

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd()).join("\n");
}

/** A latency row after its first cell: accepted rate, percentiles, count and lost. */
const latencyCells = (l: LatencyFigures) => [
  `${n(l.eventsAcceptedPerSecond)}/s`,
  ms(l.p50Ms),
  ms(l.p95Ms),
  ms(l.p99Ms),
  ms(l.maxMs),
  n(l.count),
  String(l.lost),
];

function targetOf(targets: TargetCheck[], name: string): [string, string] {
  const t = targets.find((x) => x.name === name);
  return t ? [t.target, mark(t.pass)] : ["", ""];
}

export function formatTable(r: BenchResults): string {
  const c = r.ceilings;
  const lines: string[] = [];
  lines.push(`Herald benchmark (${r.mode}), ${r.startedAt}, ${r.machine.cpus} CPUs, Node ${r.machine.node}`);
  lines.push("\nCeilings of this machine (measured in this run)");
  lines.push(
    pad([
      ["HTTP POST, 1 KB JSON, keep-alive, 64 in flight", `${n(c.httpPostsPerSecond)}/s`],
      ["RabbitMQ 1 KB persistent, quorum, confirms + acks", `${n(c.rabbitmqMessagesPerSecond)}/s`],
      ["Postgres 1-row insert transactions, 16 clients", `${n(c.postgresInsertsPerSecond)}/s`],
    ]),
  );
  if (r.soak) {
    for (const s of r.soak) lines.push(...soakLines(s));
    return lines.join("\n");
  }
  lines.push(
    "\nThe design's bound here: its HTTP exchanges and broker messages alone, at these ceilings (bound.ts)",
  );
  lines.push(
    pad(
      r.bounds.map((b) => [
        b.name,
        `≤ ${n(b.perSecond)}/s`,
        `${b.ratioToHttp.toFixed(3)} × HTTP`,
        `(${+b.unit.http.toFixed(2)} POSTs, ${+b.unit.messages.toFixed(2)} messages each)`,
      ]),
    ),
  );
  if (r.against) lines.push(...againstLines(r.against, r.profiles));
  else for (const p of r.profiles) lines.push(...profileLines(p));
  return lines.join("\n");
}

/** Which build and round a pass of the scenarios was, for titles: ` (base 5140f3a9, round 1)`. */
export function runLabel(p: ProfileResults): string {
  return p.run ? ` (${p.run.build} ${p.run.commit.slice(0, 8)}, round ${p.run.round})` : "";
}

/** A figure in a comparison's cell: whole numbers and those above 100 whole, else to 3 significant places. */
function cell(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a >= 100 || Number.isInteger(v)) return n(v);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v === 0 ? "0" : v.toFixed(3);
}

/** --against: every figure of each round of both builds, the means, change ÷ base, and the targets. */
function againstLines(a: Against, runs: ProfileResults[]): string[] {
  const lines = [
    `\nAgainst ${a.base.ref}: base ${a.base.commit.slice(0, 10)}, change ${a.change.commit.slice(0, 10)}${a.change.dirty ? " with uncommitted changes" : ""} (this checkout).`,
    `Each profile ran base, change, base, change, each on a fresh database and queues; change ÷ base is the ratio of`,
    `the means of each build's ${a.rounds} rounds. Every run's own tables and charts are in report.html.`,
  ];
  for (const c of a.comparisons) lines.push(...comparisonLines(c, runs));
  lines.push("\nTargets against the base (change ÷ base of the means)");
  lines.push(pad(a.targets.map((t) => [t.name, t.target, t.value, mark(t.pass)])));
  return lines;
}

function comparisonLines(c: Comparison, runs: ProfileResults[]): string[] {
  const rounds = Array.from({ length: c.rounds }, (_, i) => i + 1);
  const header = [
    "",
    "unit",
    ...rounds.flatMap((i) => [`base ${i}`, `change ${i}`]),
    "base",
    "change",
    "change÷base",
  ];
  const rows = [header];
  for (const row of c.rows) {
    // Shares (delivered ÷ accepted) to 3 places, all alike.
    const f = row.name.includes("÷") ? (v: number | null) => (v === null ? "–" : v.toFixed(3)) : cell;
    rows.push([
      row.name,
      row.unit,
      ...rounds.flatMap((i) => [f(row.base[i - 1] ?? null), f(row.change[i - 1] ?? null)]),
      f(row.baseMean),
      f(row.changeMean),
      row.ratio === null ? "–" : `${row.ratio.toFixed(2)}×`,
    ]);
  }
  const mine = runs.filter((p) => p.profile === c.profile && p.run);
  const description = mine.find((p) => p.run!.build === "change")?.description ?? "";
  const lines = [`\n━━ ${c.profile}: ${description}`, "", pad(rows)];
  // Each run's own targets, side by side.
  const changeFirst = [...mine].sort((a, b) =>
    a.run!.build === b.run!.build ? 0 : a.run!.build === "change" ? -1 : 1,
  );
  const names = [...new Set(changeFirst.flatMap((p) => p.targets.map((t) => t.name)))];
  const order = rounds.flatMap((i) =>
    (["base", "change"] as const).map((b) => mine.find((p) => p.run!.build === b && p.run!.round === i)),
  );
  const targetRows = [["target of each run", "", ...rounds.flatMap((i) => [`base ${i}`, `change ${i}`])]];
  for (const name of names) {
    const target = mine.flatMap((p) => p.targets).find((t) => t.name === name)!.target;
    targetRows.push([
      name,
      target,
      ...order.map((p) => {
        const t = p?.targets.find((x) => x.name === name);
        return t ? (t.pass === null ? "–" : t.pass ? "✓" : "✗") : "";
      }),
    ]);
  }
  lines.push("", pad(targetRows));
  return lines;
}

export function profileLines(p: ProfileResults): string[] {
  const t = p.targets;
  const lines = [`\n━━ ${p.profile}${runLabel(p)}: ${p.description}`];
  lines.push("\nThroughput");
  const rows = [["", "per second", "÷HTTP", "÷MQ", "÷PG", "dlv÷acc", "lost", "target", ""]];
  rows.push([
    `ingest (${p.ingest.concurrency} in flight)`,
    `${n(p.ingest.eventsPerSecond)} events`,
    ...ratio(p.ingest.ratios),
    "",
    "",
    p.run ? "≥ 1 × base (--against, below)" : "≥ 1 × base (with --against)",
    "",
  ]);
  for (const e of p.endToEnd) {
    rows.push([
      `end-to-end, ${e.name}`,
      `${n(e.deliveriesPerSecond)} deliveries`,
      ...ratio(e.ratios),
      e.deliveredOverAccepted === null ? "–" : e.deliveredOverAccepted.toFixed(3),
      String(e.lost),
      ...targetOf(t, `end-to-end, ${e.name}`),
    ]);
  }
  lines.push(pad(rows));
  const filtered = t.find((x) => x.name === "end-to-end, 10 endpoints, each filtered ÷ unfiltered");
  if (filtered && filtered.pass !== null)
    lines.push(
      `  filtered ÷ unfiltered: ${filtered.value}, target ${filtered.target}  ${mark(filtered.pass)}`,
    );
  lines.push(...transformedBesidePlainLines(p));
  lines.push(...cpuLines(p));
  lines.push(...destinationLines(p));
  const disks = p.endToEnd.filter((e) => e.disk);
  if (disks.length) {
    lines.push("\nOn disk: the delivery log's growth (events, deliveries, attempts; tables, indexes, TOAST)");
    lines.push(
      pad(
        disks.map((e) => [
          `end-to-end, ${e.name}`,
          `${n(e.disk!.bytesPerEvent)} bytes per event`,
          `${n(e.disk!.bytesPerDelivery)} per delivery`,
          `(${(e.disk!.bytes / 1048576).toFixed(1)} MiB for ${n(e.disk!.events)} events)`,
        ]),
      ),
    );
  }
  lines.push("\nLatency, 201 → arrival at the receiver (1 endpoint, open loop)");
  const lat = [["rate", "accepted", "p50", "p95", "p99", "max", "n", "lost", "target", "", "p50 target", ""]];
  for (const l of p.latency)
    lat.push([
      `${n(l.rate)} events/s`,
      ...latencyCells(l),
      ...targetOf(t, `p99 latency at ${n(l.rate)} events/s`),
      ...targetOf(t, `p50 latency at ${n(l.rate)} events/s`),
    ]);
  lines.push(pad(lat));
  if (p.hops) lines.push(...hopLines(p.hops));
  if (p.dbWaits) lines.push(...dbWaitLines(p.dbWaits));
  lines.push(...neighbourLines(p));
  lines.push(...sustainedLines(p));
  const mem = targetOf(t, "peak resident memory per service");
  lines.push("\nPeak resident memory (VmHWM)");
  if (p.memory.length === 0) lines.push("  not measured: the system was given by --url");
  else
    lines.push(
      pad(
        p.memory.map((m) => [
          m.service,
          `${m.peakMb.toFixed(0)} MB`,
          mem[0],
          mark(m.peakMb <= TARGETS.residentMb),
        ]),
      ),
    );
  const problems = p.serviceOutput.filter((o) => o.problems > 0);
  if (problems.length) {
    lines.push("\nService output at warn or above");
    for (const o of problems) lines.push(`  ${o.service}: ${o.problems} lines (${o.log})`);
  }
  const errors = [
    p.ingest,
    ...p.endToEnd,
    ...(p.transformedBesidePlain
      ? [p.transformedBesidePlain.transformed, p.transformedBesidePlain.plain]
      : []),
    ...(p.destination ? [p.destination.http, p.destination.redis] : []),
    ...p.latency,
    p.neighbour.healthy,
    p.neighbour.hanging,
    ...(p.sustained ? [p.sustained] : []),
  ].reduce((s, x) => s + x.errors, 0);
  if (errors) lines.push(`\n${errors} event POSTs failed; see errorSamples in the JSON.`);
  return lines;
}

/** CPU per delivery of each part of the stack in each throughput scenario's window (cpu.ts). */
function cpuLines(p: ProfileResults): string[] {
  const scenarios: { name: string; cpu: CpuFigures }[] = [];
  for (const e of p.endToEnd) if (e.cpu) scenarios.push({ name: `end-to-end, ${e.name}`, cpu: e.cpu });
  if (p.sustained?.cpu) scenarios.push({ name: "sustained", cpu: p.sustained.cpu });
  if (!scenarios.length) return [];
  const parts = [...new Set(scenarios.flatMap((s) => s.cpu.parts.map((x) => x.name)))];
  const ms3 = (v: number | null | undefined) => (v === null || v === undefined ? "–" : v.toFixed(3));
  const rows = [["", ...parts, "whole stack", "cores busy", "deliveries"]];
  for (const { name, cpu } of scenarios)
    rows.push([
      name,
      ...parts.map((part) => ms3(cpu.parts.find((x) => x.name === part)?.perDeliveryMs)),
      ms3(cpu.wholeStack.perDeliveryMs),
      cpu.cores.toFixed(2),
      n(cpu.deliveries),
    ]);
  const uncounted = scenarios.reduce((s, x) => s + x.cpu.missed + x.cpu.lost, 0);
  return [
    "\nCPU per delivery, ms (each process's utime + stime over the window ÷ deliveries arrived in it; cpu.ts)",
    pad(rows),
    ...(uncounted
      ? [`  ${uncounted} short-lived process(es) could not be counted (see missed and lost in the JSON)`]
      : []),
  ];
}

/** A ratio as "0.81×"; "–" when there is none. */
const times = (v: number | null) => (v === null ? "–" : `${v.toFixed(2)}×`);

/** A closed loop's cells: deliveries/s, p50, p99, delivered ÷ accepted, lost. */
const loopCells = (r: LoopRun) => [
  `${n(r.deliveriesPerSecond)}/s`,
  ms(r.p50Ms),
  ms(r.p99Ms),
  r.deliveredOverAccepted === null ? "–" : r.deliveredOverAccepted.toFixed(3),
  String(r.lost),
];

/** A transformed endpoint and a plain one, their closed loops at the same time, and transformed ÷ plain. */
function transformedBesidePlainLines(p: ProfileResults): string[] {
  const b = p.transformedBesidePlain;
  if (!b) return [];
  const row = (name: string, r: LoopRun) => [name, ...loopCells(r)];
  const o = b.transformedOverPlain;
  return [
    `\nTransformed beside plain: the end-to-end closed loop to 1 endpoint with a transformation and to 1 without, at the same time (${b.transformed.eventsInFlight} events in flight each; 201 → arrival)`,
    pad([
      ["", "deliveries", "p50", "p99", "dlv÷acc", "lost", "target", ""],
      row("transformed", b.transformed),
      row("plain", b.plain),
      [
        "transformed ÷ plain",
        times(o.deliveriesPerSecond),
        times(o.p50),
        "",
        "",
        "",
        ...targetOf(p.targets, "end-to-end, transformed beside plain"),
      ],
    ]),
  ];
}

/** HTTP endpoints against Redis streams, one closed loop after the other, and Redis ÷ HTTP. */
function destinationLines(p: ProfileResults): string[] {
  const d = p.destination;
  if (!d) return [];
  const cpu = (v: number | null | undefined) => (v === null || v === undefined ? "–" : v.toFixed(3));
  const row = (name: string, r: typeof d.http) => [
    name,
    ...loopCells(r),
    cpu(r.cpu?.parts.find((x) => x.name === "sender")?.perDeliveryMs),
    cpu(r.cpu?.wholeStack.perDeliveryMs),
  ];
  const o = d.redisOverHttp;
  return [
    `\nDestinations: the end-to-end closed loop to ${d.http.endpoints} HTTP endpoints, then to ${d.redis.endpoints} Redis streams (${d.http.eventsInFlight} events in flight; 201 → arrival, read back with XREAD)`,
    pad([
      ["", "deliveries", "p50", "p99", "dlv÷acc", "lost", "CPU ms/delivery: sender", "whole stack"],
      row("HTTP", d.http),
      row("Redis Streams", d.redis),
      ["Redis ÷ HTTP", times(o.deliveriesPerSecond), times(o.p50), times(o.p99)],
    ]),
  ];
}

/** The sustained scenario: what it was offered, whether it kept up, its backlog and latency. */
function sustainedLines(p: ProfileResults): string[] {
  const s = p.sustained;
  if (!s) return ["\nSustained load: not run (no end-to-end rate with 1 endpoint to take a share of)"];
  const t = p.targets;
  const kept = targetOf(t, "sustained: delivered ÷ accepted");
  const bounded = targetOf(t, "sustained: backlog bounded");
  const b = s.backlog;
  return [
    `\nSustained load: ${n(s.rate)} events/s to 1 endpoint (${Math.round(s.share * 100)} % of the ${n(s.capacity)}/s end to end above) for ${s.measureSeconds} s`,
    pad([
      ["accepted", "delivered ÷ accepted", "lost", "target", ""],
      [
        `${n(s.eventsAcceptedPerSecond)}/s`,
        s.deliveredOverAccepted === null ? "–" : s.deliveredOverAccepted.toFixed(3),
        String(s.lost),
        ...kept,
      ],
    ]),
    pad([
      [
        "backlog (queued messages + open deliveries)",
        "min",
        "max",
        "last",
        `trend, last ${b.tailSeconds} s`,
        "",
        "",
      ],
      [
        "over the window, each second",
        n(b.min),
        n(b.max),
        n(b.last),
        `${b.slopePerSecond >= 0 ? "+" : ""}${b.slopePerSecond}/s (bounded ≤ ${b.limitPerSecond}/s)`,
        bounded[1],
        b.bounded === null ? "too few samples" : b.bounded ? "bounded" : "growing",
      ],
    ]),
    pad([
      ["", "p50", "p95", "p99", "max", "n"],
      ["latency", ms(s.p50Ms), ms(s.p95Ms), ms(s.p99Ms), ms(s.maxMs), n(s.count)],
    ]),
  ];
}

/** The healthy endpoint beside a hanging one, next to the same rate measured alone. */
function neighbourLines(r: ProfileResults): string[] {
  const { healthy, hanging } = r.neighbour;
  const alone = r.latency.find((l) => l.rate === healthy.rate);
  const rows = [["", "accepted", "p50", "p95", "p99", "max", "n", "lost", "target", ""]];
  if (alone) rows.push(["alone (above)", ...latencyCells(alone), "", ""]);
  rows.push([
    "beside a hanging endpoint",
    ...latencyCells(healthy),
    ...targetOf(r.targets, "p99 beside a hanging endpoint"),
  ]);
  return [
    `\nNoisy neighbour: ${n(healthy.rate)} events/s to one app's endpoint while another app's holds each request ${hanging.holdMs / 1000} s (${n(hanging.events)} events sent to it in ${hanging.events / hanging.rate} s)`,
    pad(rows),
    `  the hanging endpoint: at most ${n(hanging.mostInFlight)} attempts in flight, ${n(hanging.arrivedWhileHanging)} of ${n(hanging.accepted)} events reached it while it hung, ${hanging.lost} lost once it answered`,
  ];
}
