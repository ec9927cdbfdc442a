import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { escapeXml, histogramChart, lineChart } from "./charts.ts";
import { dbWaitLines } from "./dbWaits.ts";
import { hopLines } from "./hops.ts";
import type { BenchResults, LatencyFigures, ProfileResults, Ratios } from "./results.ts";
import { TARGETS, type TargetCheck } from "./targets.ts";

/** The figures as a table for the terminal, and as JSON and an HTML page with charts under `dir`. */

const n = (v: number) => Math.round(v).toLocaleString("en-US");
const ms = (v: number) => `${v.toFixed(1)} ms`;
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
  for (const p of r.profiles) lines.push(...profileLines(p));
  return lines.join("\n");
}

function profileLines(p: ProfileResults): string[] {
  const t = p.targets;
  const lines = [`\n━━ ${p.profile}: ${p.description}`];
  lines.push("\nThroughput");
  const rows = [["", "per second", "÷HTTP", "÷MQ", "÷PG", "lost", "target", ""]];
  rows.push([
    `ingest (${p.ingest.concurrency} in flight)`,
    `${n(p.ingest.eventsPerSecond)} events`,
    ...ratio(p.ingest.ratios),
    "",
    ...targetOf(t, "ingest"),
  ]);
  for (const e of p.endToEnd) {
    rows.push([
      `end-to-end, ${e.name}`,
      `${n(e.deliveriesPerSecond)} deliveries`,
      ...ratio(e.ratios),
      String(e.lost),
      ...targetOf(t, `end-to-end, ${e.name}`),
    ]);
  }
  lines.push(pad(rows));
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
  const errors = [p.ingest, ...p.endToEnd, ...p.latency, p.neighbour.healthy, p.neighbour.hanging].reduce(
    (s, x) => s + x.errors,
    0,
  );
  if (errors) lines.push(`\n${errors} event POSTs failed; see errorSamples in the JSON.`);
  return lines;
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

function profileCharts(r: ProfileResults): string[] {
  const charts: string[] = [];
  const histograms = [
    ...r.latency.map((l) => ({ l, name: `at ${n(l.rate)} events/s` })),
    { l: r.neighbour.healthy, name: `at ${n(r.neighbour.healthy.rate)} events/s beside a hanging endpoint` },
  ];
  for (const { l, name } of histograms) {
    charts.push(
      histogramChart({
        title: `${r.profile}: latency distribution ${name} (${n(l.count)} deliveries)`,
        bins: l.histogram,
        markers: [
          { label: `p50 ${ms(l.p50Ms)}`, value: l.p50Ms },
          { label: `p95 ${ms(l.p95Ms)}`, value: l.p95Ms },
          { label: `p99 ${ms(l.p99Ms)}`, value: l.p99Ms },
        ],
      }),
    );
  }
  const band = (warm: number, measure: number) => ({ from: warm, to: warm + measure, label: "measured" });
  for (const e of r.endToEnd)
    charts.push(
      lineChart({
        title: `${r.profile}: end-to-end, ${e.name}, per second`,
        yLabel: "per second",
        series: [
          { name: "events accepted", values: e.acceptedPerSecond },
          { name: "deliveries arrived", values: e.arrivedPerSecond },
        ],
        band: band(e.warmSeconds, e.measureSeconds),
      }),
    );
  for (const l of r.latency)
    charts.push(
      lineChart({
        title: `${r.profile}: open loop at ${n(l.rate)} events/s, per second`,
        yLabel: "per second",
        series: [
          { name: "events accepted", values: l.acceptedPerSecond },
          { name: "deliveries arrived", values: l.arrivedPerSecond },
        ],
        band: band(l.warmSeconds, l.measureSeconds),
      }),
    );
  const { healthy, hanging } = r.neighbour;
  charts.push(
    lineChart({
      title: `${r.profile}: beside a hanging endpoint, per second (its requests answered after ${hanging.holdMs / 1000} s until the window ends)`,
      yLabel: "per second",
      series: [
        { name: "healthy: events accepted", values: healthy.acceptedPerSecond },
        { name: "healthy: deliveries arrived", values: healthy.arrivedPerSecond },
        { name: "hanging: deliveries arrived", values: hanging.arrivedPerSecond },
      ],
      band: band(healthy.warmSeconds, healthy.measureSeconds),
    }),
  );
  charts.push(
    lineChart({
      title: `${r.profile}: ingest, ${r.ingest.concurrency} in flight, events accepted per second`,
      yLabel: "events per second",
      series: [{ name: "events accepted", values: r.ingest.acceptedPerSecond }],
      band: band(r.ingest.warmSeconds, r.ingest.measureSeconds),
    }),
  );
  if (r.memory.length)
    charts.push(
      lineChart({
        title: `${r.profile}: resident memory (VmRSS) of each service, sampled each second`,
        yLabel: "MB",
        series: r.memory.map((m) => ({ name: m.service, values: m.rssMb })),
        xLabel: "seconds since the services started",
      }),
    );
  return charts;
}

function html(r: BenchResults): string {
  const table = escapeXml(formatTable(r));
  const all = r.profiles.flatMap(profileCharts);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald benchmark ${escapeXml(r.startedAt)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:960px;padding:0 16px;color:#111}
pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:12px}
svg{display:block;margin:18px 0;background:#fff;border:1px solid #e5e5e5}
.title{font-weight:600;font-size:13px}.axis{font-size:11px;fill:#444}.tick{font-size:10px;fill:#555}
.halo{paint-order:stroke;stroke:#fff;stroke-width:3px}.grid{stroke:#eee}.axisline{stroke:#888}.band{fill:#2563eb;fill-opacity:.06}
</style></head><body>
<h1>Herald benchmark</h1>
<p>${escapeXml(r.mode)} run, ${escapeXml(r.startedAt)} to ${escapeXml(r.finishedAt)};
${r.machine.cpus} × ${escapeXml(r.machine.cpuModel)}, ${n(r.machine.memoryMb)} MB, Node ${escapeXml(r.machine.node)};
system ${r.system.url ? `at ${escapeXml(r.system.url)}` : `started by the benchmark (${r.system.dispatchers} dispatcher(s), ${r.system.senders} sender(s))`}.</p>
<pre>${table}</pre>
${all.join("\n")}
</body></html>
`;
}

/** Writes `<timestamp>.json`, `latest.json` and `report.html`; returns their paths. */
export async function writeReports(r: BenchResults, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const stamp = r.startedAt.replace(/[:.]/g, "-");
  const json = join(dir, `${stamp}.json`);
  const latest = join(dir, "latest.json");
  const page = join(dir, "report.html");
  await writeFile(json, `${JSON.stringify(r, null, 2)}\n`);
  await copyFile(json, latest);
  await writeFile(page, html(r));
  return [json, latest, page];
}
