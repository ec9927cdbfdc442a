import type { JobHooks } from "./loadProcess.ts";
import type { Phase } from "./protocol.ts";

/**
 * The sustained scenario's view of the system each second: what the load generator counted
 * (events accepted, deliveries arrived, since the job started) and what waited inside the
 * system at that moment (system.ts `backlog`): messages ready in its queues, and deliveries to
 * the endpoint not yet finished in the database. The backlog is their sum. A queued message may
 * carry several events (a gateway publishes what it committed meanwhile as one), so it is a
 * count of things waiting, not of events.
 */
export type BacklogSample = {
  /** Seconds since the job started (its warm-up first). */
  atSeconds: number;
  phase: Phase;
  accepted: number;
  delivered: number;
  queued: number;
  open: number;
  backlog: number;
};

/**
 * Whether the backlog stayed bounded over the window. Over its last TAIL_SECONDS (its last half
 * when the window is shorter than twice that, as in --quick), the least-squares slope of the
 * backlog against time must be at most GROWTH_SHARE of the offered rate: the backlog grows by
 * less than 2 events a second per 100 offered, as falling behind by the 2 % that delivered ÷
 * accepted ≥ 0.98 allows would make it grow.
 */
export type BacklogVerdict = {
  /** Over the window's samples. */
  min: number;
  max: number;
  last: number;
  /** The span the trend is taken over, the window's last seconds, and how many samples it holds. */
  tailSeconds: number;
  tailSamples: number;
  /** The backlog's least-squares slope over that span, per second. */
  slopePerSecond: number;
  /** The most it may grow a second and still count as bounded. */
  limitPerSecond: number;
  /** Null with fewer than 3 samples in the span. */
  bounded: boolean | null;
};

export const TAIL_SECONDS = 20;
export const GROWTH_SHARE = 0.02;

/** The least-squares slope of y over x; 0 for fewer than 2 distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

/**
 * The verdict on `samples` over the window [from, to] (seconds since the job started; the
 * samples at both ends included, a tick's lateness of up to half a second allowed). The trend
 * is taken over the last `longestTail` seconds (a soak passes a longer one), at most the window's half.
 */
export function backlogVerdict(
  samples: readonly BacklogSample[],
  window: { from: number; to: number },
  offeredRate: number,
  longestTail = TAIL_SECONDS,
): BacklogVerdict {
  const inWindow = samples.filter((s) => s.atSeconds >= window.from - 0.5 && s.atSeconds <= window.to + 0.5);
  const tailSeconds = Math.min(longestTail, (window.to - window.from) / 2);
  const tail = inWindow.filter((s) => s.atSeconds >= window.to - tailSeconds - 0.5);
  const values = inWindow.map((s) => s.backlog);
  const perSecond = slope(tail.map((s) => ({ x: s.atSeconds, y: s.backlog })));
  const limitPerSecond = GROWTH_SHARE * offeredRate;
  return {
    min: values.length ? Math.min(...values) : 0,
    max: values.length ? Math.max(...values) : 0,
    last: values[values.length - 1] ?? 0,
    tailSeconds,
    tailSamples: tail.length,
    slopePerSecond: Math.round(perSecond * 100) / 100,
    limitPerSecond: Math.round(limitPerSecond * 100) / 100,
    bounded: tail.length >= 3 ? perSecond <= limitPerSecond : null,
  };
}

/** Delivered ÷ accepted between consecutive samples: each second's share of what came in that went out. */
export function perSecondRatio(samples: readonly BacklogSample[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const accepted = samples[i]!.accepted - samples[i - 1]!.accepted;
    const delivered = samples[i]!.delivered - samples[i - 1]!.delivered;
    out.push(accepted > 0 ? Math.round((delivered / accepted) * 1000) / 1000 : 0);
  }
  return out;
}

/**
 * Reads the backlog on each of the load generator's seconds (`onTick`), next to its totals. A
 * read still running when the next second comes makes that second skipped, not queued.
 */
export function backlogSampler(read: () => Promise<{ queued: number; open: number } | null>): {
  hooks: JobHooks;
  samples: () => BacklogSample[];
} {
  const samples: BacklogSample[] = [];
  let busy = false;
  return {
    hooks: {
      onTick({ atMs, phase, totals }) {
        if (busy) return;
        busy = true;
        read()
          .then((b) => {
            if (b)
              samples.push({
                atSeconds: Math.round(atMs / 100) / 10,
                phase,
                accepted: totals.accepted,
                delivered: totals.arrived,
                queued: b.queued,
                open: b.open,
                backlog: b.queued + b.open,
              });
          })
          .catch(() => {})
          .finally(() => {
            busy = false;
          });
      },
    },
    samples: () => samples.sort((a, b) => a.atSeconds - b.atSeconds),
  };
}
