/** Pure arithmetic over the measurements: percentiles, summaries, histograms, rates. */

/**
 * The p-th percentile (0 to 100) of ascending `sorted` values, interpolating linearly between the
 * two nearest ranks (so p50 of [1, 2] is 1.5). NaN for no values.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const a = sorted[low]!;
  const b = sorted[high]!;
  return a + (b - a) * (rank - low);
}

export type Summary = {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
};

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    count: sorted.length,
    min: sorted[0] ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export type Bin = { from: number; to: number; count: number };

/**
 * Counts of `values` in logarithmic bins, `perDecade` bins per power of ten, from the bin of the
 * smallest value to that of the largest (empty bins between included, for a chart). Values below
 * `floor` count in the first bin: latencies of 0 ms happen when the clock is coarse.
 */
export function logHistogram(values: readonly number[], perDecade = 10, floor = 0.1): Bin[] {
  if (values.length === 0) return [];
  const index = (v: number) => Math.floor(Math.log10(Math.max(v, floor)) * perDecade);
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    const i = index(v);
    if (i < lo) lo = i;
    if (i > hi) hi = i;
  }
  const bins: Bin[] = [];
  for (let i = lo; i <= hi; i++)
    bins.push({ from: 10 ** (i / perDecade), to: 10 ** ((i + 1) / perDecade), count: 0 });
  for (const v of values) bins[index(v) - lo]!.count++;
  return bins;
}

/** Per second, rounded to 0.1. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? Math.round((count / ms) * 10_000) / 10 : 0;
}

/** Adds one to the bucket of second `at / 1000`, growing `counts` as needed. */
export function countInSecond(counts: number[], atMs: number): void {
  const i = Math.max(0, Math.floor(atMs / 1000));
  while (counts.length <= i) counts.push(0);
  counts[i]!++;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
