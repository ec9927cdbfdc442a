/** Inline SVG charts for the HTML report: plain strings, no library, no script. */
import type { Bin } from "./stats.ts";

export const PALETTE = [
  "#2563eb",
  "#dc2626",
  "#16a34a",
  "#d97706",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#4b5563",
];

const W = 720;
const H = 260;
const M = { top: 44, right: 16, bottom: 40, left: 64 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;

export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function fmt(v: number): string {
  if (v >= 10_000) return `${Math.round(v / 1000)}k`;
  if (v >= 1000) return Number.isInteger(v / 1000) ? `${v / 1000}k` : `${(v / 1000).toFixed(1)}k`;
  if (v >= 10 || Number.isInteger(v)) return String(Math.round(v));
  return v.toFixed(1);
}

/** A round axis maximum at or above `max`, with its tick step: 1, 2 or 5 × a power of ten. */
function niceScale(max: number, ticks = 5): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const raw = max / ticks;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow;
  return { top: Math.ceil(max / step) * step, step };
}

function frame(title: string, body: string, xLabel: string, yLabel: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeXml(title)}">
<text x="${M.left}" y="18" class="title">${escapeXml(title)}</text>
${body}
<text x="${M.left + PW / 2}" y="${H - 6}" text-anchor="middle" class="axis">${escapeXml(xLabel)}</text>
<text transform="translate(14 ${M.top + PH / 2}) rotate(-90)" text-anchor="middle" class="axis">${escapeXml(yLabel)}</text>
</svg>`;
}

function yAxis(top: number, step: number): string {
  let out = "";
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = M.top + PH - (v / top) * PH;
    out += `<line x1="${M.left}" x2="${M.left + PW}" y1="${y}" y2="${y}" class="grid"/>`;
    out += `<text x="${M.left - 6}" y="${y + 4}" text-anchor="end" class="tick">${fmt(v)}</text>`;
  }
  return out;
}

export type Series = { name: string; values: number[] };

/**
 * One line per series over seconds; `band` shades the measurement window [from, to) in seconds.
 * Each value is drawn at the middle of its second.
 */
export function lineChart(opts: {
  title: string;
  yLabel: string;
  series: Series[];
  band?: { from: number; to: number; label: string };
  xLabel?: string;
}): string {
  const seconds = Math.max(1, ...opts.series.map((s) => s.values.length));
  const { top, step } = niceScale(Math.max(0, ...opts.series.flatMap((s) => s.values)));
  const x = (sec: number) => M.left + (sec / seconds) * PW;
  const y = (v: number) => M.top + PH - (v / top) * PH;
  let body = yAxis(top, step);
  if (opts.band) {
    const x0 = x(opts.band.from);
    const x1 = x(Math.min(seconds, opts.band.to));
    body += `<rect x="${x0}" y="${M.top}" width="${Math.max(0, x1 - x0)}" height="${PH}" class="band"/>`;
    body += `<text x="${x0 + 4}" y="${M.top + 12}" class="tick">${escapeXml(opts.band.label)}</text>`;
  }
  const xStep = niceScale(seconds, 8).step;
  for (let s = 0; s <= seconds; s += xStep)
    body += `<text x="${x(s)}" y="${M.top + PH + 16}" text-anchor="middle" class="tick">${fmt(s)}</text>`;
  body += `<line x1="${M.left}" x2="${M.left + PW}" y1="${M.top + PH}" y2="${M.top + PH}" class="axisline"/>`;
  opts.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    const points = s.values.map((v, sec) => `${x(sec + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    body += `<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2"/>`;
    body += `<rect x="${M.left + i * 150}" y="${M.top - 14}" width="10" height="3" fill="${color}"/>`;
    body += `<text x="${M.left + 14 + i * 150}" y="${M.top - 9}" class="tick">${escapeXml(s.name)}</text>`;
  });
  return frame(opts.title, body, opts.xLabel ?? "seconds since the scenario started", opts.yLabel);
}

/** Bars of a log-binned histogram (x logarithmic, in ms), with vertical marks at `markers`. */
export function histogramChart(opts: {
  title: string;
  bins: Bin[];
  markers: { label: string; value: number }[];
}): string {
  const { bins } = opts;
  if (bins.length === 0) return frame(opts.title, "", "latency (ms, log scale)", "deliveries");
  const lo = Math.log10(bins[0]!.from);
  const hi = Math.log10(bins[bins.length - 1]!.to);
  const x = (v: number) => M.left + ((Math.log10(v) - lo) / (hi - lo)) * PW;
  const { top, step } = niceScale(Math.max(...bins.map((b) => b.count)));
  const y = (v: number) => M.top + PH - (v / top) * PH;
  let body = yAxis(top, step);
  for (const b of bins) {
    const x0 = x(b.from);
    const w = Math.max(1, x(b.to) - x0 - 1);
    body += `<rect x="${x0.toFixed(1)}" y="${y(b.count).toFixed(1)}" width="${w.toFixed(1)}" height="${(M.top + PH - y(b.count)).toFixed(1)}" fill="${PALETTE[0]}"><title>${fmt(b.from)}–${fmt(b.to)} ms: ${b.count}</title></rect>`;
  }
  for (let d = Math.floor(lo); d <= Math.ceil(hi); d++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** d;
      if (Math.log10(v) < lo || Math.log10(v) > hi) continue;
      body += `<text x="${x(v)}" y="${M.top + PH + 16}" text-anchor="middle" class="tick">${fmt(v)}</text>`;
    }
  }
  body += `<line x1="${M.left}" x2="${M.left + PW}" y1="${M.top + PH}" y2="${M.top + PH}" class="axisline"/>`;
  opts.markers.forEach((m, i) => {
    if (!(m.value > 0)) return;
    const mx = x(Math.min(Math.max(m.value, bins[0]!.from), bins[bins.length - 1]!.to));
    const color = PALETTE[(i + 1) % PALETTE.length];
    body += `<line x1="${mx}" x2="${mx}" y1="${M.top}" y2="${M.top + PH}" stroke="${color}" stroke-dasharray="4 3"/>`;
    // Labels near the right edge go to the left of their line.
    const [tx, anchor] = mx > M.left + PW * 0.7 ? [mx - 3, "end"] : [mx + 3, "start"];
    body += `<text x="${tx}" y="${M.top + 12 + i * 12}" text-anchor="${anchor}" class="tick halo" fill="${color}">${escapeXml(m.label)}</text>`;
  });
  return frame(opts.title, body, "latency (ms, log scale)", "deliveries");
}
