import { useId } from "react";
import type { StatsBucket } from "../types.ts";
import { niceMax, runs, type Slot, toSlots } from "./chartScale.ts";
import { useWidth } from "./useWidth.ts";

/**
 * Attempts per minute by outcome (stacked bars) and latency percentiles (lines) over the last
 * hour, as inline SVG. Each chart is an image with a summary for screen readers, and the
 * numbers behind both are in a table that is visually hidden but read out.
 */
const HEIGHT = 180;
const PAD = { top: 10, right: 10, bottom: 24, left: 44 };
const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const minute = (t: number) => clock.format(new Date(t));

type Frame = { width: number; x: (i: number) => number; y: (v: number) => number; slot: number };

function frame(width: number, count: number, max: number): Frame {
  const plotW = width - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  return {
    width,
    slot: plotW / count,
    x: (i) => PAD.left + (i * plotW) / count,
    y: (v) => PAD.top + plotH - (v / max) * plotH,
  };
}

function Axes({ f, slots, max, unit }: { f: Frame; slots: Slot[]; max: number; unit: string }) {
  const ticks = [0, max / 2, max];
  const labelEvery = f.width < 420 ? 30 : 15;
  // Inside a role="img", so screen readers read the summary label rather than these.
  return (
    <g>
      {ticks.map((t) => (
        <g key={t}>
          <line className="chart-grid" x1={PAD.left} x2={f.width - PAD.right} y1={f.y(t)} y2={f.y(t)} />
          <text className="chart-label" x={PAD.left - 6} y={f.y(t) + 4} textAnchor="end">
            {Number.isInteger(t) ? t : t.toFixed(1)}
            {t === max && unit ? ` ${unit}` : ""}
          </text>
        </g>
      ))}
      {slots.map((s, i) =>
        i % labelEvery === 0 || i === slots.length - 1 ? (
          <text
            key={s.start}
            className="chart-label"
            x={f.x(i) + f.slot / 2}
            y={HEIGHT - 6}
            textAnchor={i === slots.length - 1 ? "end" : "middle"}
          >
            {minute(s.start)}
          </text>
        ) : null,
      )}
    </g>
  );
}

function OutcomeBars({ slots, width }: { slots: Slot[]; width: number }) {
  const succeeded = slots.reduce((n, s) => n + s.succeeded, 0);
  const failed = slots.reduce((n, s) => n + s.failed, 0);
  const busiest = slots.reduce((a, s) => (s.succeeded + s.failed > a.succeeded + a.failed ? s : a));
  const max = niceMax(busiest.succeeded + busiest.failed, 2);
  const f = frame(width, slots.length, max);
  const gap = f.slot > 4 ? 1 : 0;
  // Failed bars are hatched as well as red, so the outcomes differ without colour vision too.
  const hatch = `failed-hatch-${useId().replace(/[^\w-]/g, "")}`;
  const label = `Attempts per minute over the last hour: ${succeeded} succeeded and ${failed} failed; the busiest minute, ${minute(busiest.start)}, had ${busiest.succeeded + busiest.failed}.`;
  return (
    <svg
      className="chart"
      width={width}
      height={HEIGHT}
      viewBox={`0 0 ${width} ${HEIGHT}`}
      role="img"
      aria-label={label}
    >
      <defs>
        <pattern id={hatch} width={6} height={6} patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <rect className="chart-hatch-ground" width={6} height={6} />
          <line className="chart-hatch-line" x1={0} y1={0} x2={0} y2={6} />
        </pattern>
      </defs>
      <Axes f={f} slots={slots} max={max} unit="" />
      {slots.map((s, i) =>
        s.succeeded + s.failed ? (
          <g key={s.start} data-minute={s.start}>
            <rect
              className="chart-bar-ok"
              x={f.x(i) + gap}
              width={Math.max(1, f.slot - 2 * gap)}
              y={f.y(s.succeeded)}
              height={f.y(0) - f.y(s.succeeded)}
            />
            <rect
              className="chart-bar-fail"
              fill={`url(#${hatch})`}
              x={f.x(i) + gap}
              width={Math.max(1, f.slot - 2 * gap)}
              y={f.y(s.succeeded + s.failed)}
              height={f.y(s.succeeded) - f.y(s.succeeded + s.failed)}
            />
          </g>
        ) : null,
      )}
    </svg>
  );
}

function LatencyLines({ slots, width }: { slots: Slot[]; width: number }) {
  const highest = slots.reduce((a, s) => ((s.p95 ?? -1) > (a.p95 ?? -1) ? s : a));
  const latest = slots.findLast((s) => s.p50 !== null);
  const max = niceMax(highest.p95 ?? 0, 10);
  const f = frame(width, slots.length, max);
  const label = latest
    ? `Attempt latency over the last hour: in the latest minute with attempts, ${minute(latest.start)}, the median (p50) was ${latest.p50} ms and the 95th percentile (p95) ${latest.p95} ms; the highest p95 was ${highest.p95} ms at ${minute(highest.start)}.`
    : "Attempt latency over the last hour: no completed attempts.";
  const series = [
    { name: "p50", value: (s: Slot) => s.p50 },
    { name: "p95", value: (s: Slot) => s.p95 },
  ];
  return (
    <svg
      className="chart"
      width={width}
      height={HEIGHT}
      viewBox={`0 0 ${width} ${HEIGHT}`}
      role="img"
      aria-label={label}
    >
      <Axes f={f} slots={slots} max={max} unit="ms" />
      {series.map(({ name, value }) => (
        <g key={name} className={`chart-line-${name}`}>
          {runs(slots, value).map((run) => (
            <g key={run[0]?.i}>
              <polyline points={run.map((p) => `${f.x(p.i) + f.slot / 2},${f.y(p.v)}`).join(" ")} />
              {run.map((p) => (
                <circle key={p.i} cx={f.x(p.i) + f.slot / 2} cy={f.y(p.v)} r={2.5} />
              ))}
            </g>
          ))}
        </g>
      ))}
    </svg>
  );
}

function StatsTable({ buckets }: { buckets: StatsBucket[] }) {
  // Hidden by its wrapper: a table grows to its content whatever width it is given.
  return (
    <div className="visually-hidden">
      <table>
        <caption>Attempts per minute</caption>
        <thead>
          <tr>
            <th scope="col">Minute</th>
            <th scope="col">Succeeded</th>
            <th scope="col">Failed</th>
            <th scope="col">p50 (ms)</th>
            <th scope="col">p95 (ms)</th>
          </tr>
        </thead>
        <tbody>
          {buckets.map((b) => (
            <tr key={b.start}>
              <th scope="row">{minute(Date.parse(b.start))}</th>
              <td>{b.succeeded}</td>
              <td>{b.failed}</td>
              <td>{b.p50_ms ?? "—"}</td>
              <td>{b.p95_ms ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AttemptsChart({ buckets, now }: { buckets: StatsBucket[]; now: number }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const slots = toSlots(buckets, now);
  return (
    <div ref={ref} className="attempts-chart">
      <figure className="chart-figure">
        <figcaption>
          <h3>Attempts per minute</h3>
          <span className="legend" aria-hidden="true">
            <span>
              <span className="legend-swatch swatch-ok" />
              succeeded
            </span>
            <span>
              <span className="legend-swatch swatch-fail legend-hatched" />
              failed
            </span>
          </span>
        </figcaption>
        <OutcomeBars slots={slots} width={width} />
      </figure>
      <figure className="chart-figure">
        <figcaption>
          <h3>Latency</h3>
          <span className="legend" aria-hidden="true">
            <span>
              <span className="legend-swatch swatch-p50" />
              p50 (median)
            </span>
            <span>
              <span className="legend-swatch swatch-p95 legend-dashed" />
              p95
            </span>
          </span>
        </figcaption>
        <LatencyLines slots={slots} width={width} />
      </figure>
      <StatsTable buckets={buckets} />
    </div>
  );
}
