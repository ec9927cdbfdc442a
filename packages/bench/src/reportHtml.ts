import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { escapeXml, histogramChart, lineChart } from "./charts.ts";
import { formatTable, ms, n, profileLines, runLabel } from "./report.ts";
import type { BenchResults, ProfileResults } from "./results.ts";
import type { SoakFigures } from "./soakFigures.ts";
import { type BacklogSample, perSecondRatio } from "./sustained.ts";

/** The figures as JSON and as an HTML page with charts (report.ts makes the terminal's table). */

/** Values per whole second from samples taken about each second (a missing second repeats the last). */
function bySecond(samples: readonly BacklogSample[], pick: (s: BacklogSample) => number): number[] {
  const out: number[] = [];
  for (const s of samples) {
    const i = Math.round(s.atSeconds);
    while (out.length < i) out.push(out[out.length - 1] ?? pick(s));
    out[i] = pick(s);
  }
  return out;
}

function sustainedCharts(name: string, r: ProfileResults): string[] {
  const s = r.sustained;
  if (!s) return [];
  const band = { from: s.warmSeconds, to: s.warmSeconds + s.measureSeconds, label: "measured" };
  const ratios = perSecondRatio(s.samples);
  return [
    lineChart({
      title: `${name}: sustained at ${n(s.rate)} events/s, backlog each second (${s.backlog.bounded === false ? "growing" : "bounded"})`,
      yLabel: "waiting",
      series: [
        { name: "backlog", values: bySecond(s.samples, (x) => x.backlog) },
        { name: "queued messages", values: bySecond(s.samples, (x) => x.queued) },
        { name: "open deliveries", values: bySecond(s.samples, (x) => x.open) },
      ],
      band,
    }),
    lineChart({
      title: `${name}: sustained at ${n(s.rate)} events/s, per second`,
      yLabel: "per second",
      series: [
        { name: "events accepted", values: s.acceptedPerSecond },
        { name: "deliveries arrived", values: s.arrivedPerSecond },
      ],
      band,
    }),
    lineChart({
      title: `${name}: sustained, delivered ÷ accepted each second (${s.deliveredOverAccepted?.toFixed(3) ?? "–"} over the window)`,
      yLabel: "delivered ÷ accepted",
      // Sample i covers the second from sample i-1 to i.
      series: [{ name: "delivered ÷ accepted", values: [ratios[0] ?? 0, ...ratios] }],
      band,
    }),
  ];
}

function profileCharts(r: ProfileResults): string[] {
  const charts: string[] = [];
  const name = `${r.profile}${runLabel(r)}`;
  const histograms = [
    ...r.latency.map((l) => ({ l, name: `at ${n(l.rate)} events/s` })),
    { l: r.neighbour.healthy, name: `at ${n(r.neighbour.healthy.rate)} events/s beside a hanging endpoint` },
  ];
  for (const { l, name } of histograms) {
    charts.push(
      histogramChart({
        title: `${name}: latency distribution ${name} (${n(l.count)} deliveries)`,
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
        title: `${name}: end-to-end, ${e.name}, per second`,
        yLabel: "per second",
        series: [
          { name: "events accepted", values: e.acceptedPerSecond },
          { name: "deliveries arrived", values: e.arrivedPerSecond },
        ],
        band: band(e.warmSeconds, e.measureSeconds),
      }),
    );
  const b = r.transformedBesidePlain;
  if (b)
    charts.push(
      lineChart({
        title: `${name}: end-to-end, 1 endpoint transformed beside 1 plain, at the same time, per second`,
        yLabel: "per second",
        series: [
          { name: "transformed: deliveries arrived", values: b.transformed.arrivedPerSecond },
          { name: "plain: deliveries arrived", values: b.plain.arrivedPerSecond },
        ],
        band: band(b.transformed.warmSeconds, b.transformed.measureSeconds),
      }),
    );
  for (const l of r.latency)
    charts.push(
      lineChart({
        title: `${name}: open loop at ${n(l.rate)} events/s, per second`,
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
      title: `${name}: beside a hanging endpoint, per second (its requests answered after ${hanging.holdMs / 1000} s until the window ends)`,
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
      title: `${name}: ingest, ${r.ingest.concurrency} in flight, events accepted per second`,
      yLabel: "events per second",
      series: [{ name: "events accepted", values: r.ingest.acceptedPerSecond }],
      band: band(r.ingest.warmSeconds, r.ingest.measureSeconds),
    }),
  );
  charts.push(...sustainedCharts(name, r));
  if (r.memory.length)
    charts.push(
      lineChart({
        title: `${name}: resident memory (VmRSS) of each service, sampled each second`,
        yLabel: "MB",
        series: r.memory.map((m) => ({ name: m.service, values: m.rssMb })),
        xLabel: "seconds since the services started",
      }),
    );
  return charts;
}

/** A soak's minutes: latency, each process's resident memory, the backlog, each at the minute's end. */
function soakCharts(s: SoakFigures): string[] {
  const names = Object.keys(s.rows[0]?.rssMb ?? {});
  const perMinute = (title: string, yLabel: string, series: { name: string; values: number[] }[]) =>
    lineChart({ title: `soak, ${s.profile}: ${title}`, yLabel, series, xLabel: "minutes of the soak" });
  const rss = (picked: string[]) =>
    picked.map((name) => ({ name, values: s.rows.map((m) => m.rssMb[name] ?? 0) }));
  const backing = ["postgres", "rabbitmq"];
  return [
    perMinute(`201 → arrival of each minute's deliveries at ${n(s.rate)} events/s`, "ms", [
      { name: "p50", values: s.rows.map((m) => m.p50Ms ?? 0) },
      { name: "p99", values: s.rows.map((m) => m.p99Ms ?? 0) },
    ]),
    perMinute(
      "resident memory (VmRSS) of each Herald process at each minute's end",
      "MB",
      rss(names.filter((x) => !backing.includes(x))),
    ),
    perMinute(
      "resident memory of PostgreSQL's and RabbitMQ's processes, shared memory counted once, at each minute's end",
      "MB",
      rss(names.filter((x) => backing.includes(x))),
    ),
    perMinute("events accepted and deliveries arrived each minute", "per minute", [
      { name: "events accepted", values: s.rows.map((m) => m.accepted) },
      { name: "deliveries arrived", values: s.rows.map((m) => m.delivered) },
    ]),
    perMinute(
      `backlog (queued messages + open deliveries) at each minute's end (${s.verdict.backlog.bounded === false ? "growing" : "bounded"})`,
      "waiting",
      [{ name: "backlog", values: s.rows.map((m) => m.backlog ?? 0) }],
    ),
  ];
}

function html(r: BenchResults): string {
  const table = escapeXml(formatTable(r));
  // With --against, the table compares; each run's own figures follow, each with its charts.
  const runs = r.against
    ? r.profiles.map(
        (p) =>
          `<h2>${escapeXml(`${p.profile}${runLabel(p)}`)}</h2>\n<pre>${escapeXml(profileLines(p).join("\n"))}</pre>\n${profileCharts(p).join("\n")}`,
      )
    : [[...r.profiles.flatMap(profileCharts), ...(r.soak ?? []).flatMap(soakCharts)].join("\n")];
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
${runs.join("\n")}
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
