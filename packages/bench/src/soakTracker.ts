import type { DeliveryCounts, SoakSamples } from "./protocol.ts";
import { countInSecond } from "./stats.ts";
import type { Tracking } from "./tracker.ts";

/** An event not yet done: its `201` (null while the POST is out) and the paths it reached. */
type Open = { acceptedAt: number | null; paths: Set<string>; firstAt: number };

/** How long a done event's id is remembered at least (and at most twice that). */
export const FORGET_MS = 60_000;

/**
 * A soak's tracker (load generator side). It counts as DeliveryTracker does (tracker.ts): a
 * delivery is an event id (`webhook-id`) at a path, counted once, whichever of its `201` and its
 * arrival comes first. Unlike it, it holds only the events still open, so that its memory stays
 * flat over hours: an event whose every delivery arrived is forgotten, its id remembered for one
 * to two FORGET_MS (two sets, the older dropped each FORGET_MS) so that a duplicate arriving
 * meanwhile counts as a duplicate. An arrival whose event got no `201` within FORGET_MS (a later
 * duplicate, or an event whose POST failed after the gateway created it) is dropped then and
 * counted `unmatched`. No latencies are kept: `take()` hands over what happened since its last
 * call, for main to sort into minutes (soakFigures.ts). Times are ms since the job started.
 */
export class SoakTracker implements Tracking {
  private readonly open = new Map<string, Open>();
  private recent = new Set<string>();
  private older = new Set<string>();
  private rotatedAt = 0;
  private readonly perSecond: number[] = [];
  private accepted = 0;
  private distinct = 0;
  private outstanding = 0;
  private duplicates = 0;
  private unmatched = 0;
  private arrivedInWindow = 0;
  private pending: SoakSamples = { accepted: [], arrived: [], latenciesMs: [] };

  constructor(
    private readonly fanOut: number,
    private readonly window: { start: number; end: number },
  ) {}

  accept(id: string, at: number): void {
    this.rotate(at);
    if (this.isDone(id)) return;
    const state = this.state(id, at);
    if (state.acceptedAt !== null) return;
    state.acceptedAt = at;
    this.accepted++;
    this.outstanding += Math.max(0, this.fanOut - state.paths.size);
    this.pending.accepted.push(at);
    // Those that beat their 201 here arrived as good as instantly.
    for (let i = 0; i < Math.min(state.paths.size, this.fanOut); i++) this.sample(at, 0);
    this.finishIfDone(id, state);
  }

  arrive(id: string, path: string, at: number): void {
    this.rotate(at);
    const state = this.isDone(id) ? null : this.state(id, at);
    if (!state || state.paths.has(path)) {
      this.duplicates++;
      return;
    }
    state.paths.add(path);
    this.distinct++;
    countInSecond(this.perSecond, at);
    if (at >= this.window.start && at < this.window.end) this.arrivedInWindow++;
    if (state.acceptedAt !== null && state.paths.size <= this.fanOut) {
      this.outstanding--;
      this.sample(at, at - state.acceptedAt);
    }
    this.finishIfDone(id, state);
  }

  arrivals(): number {
    return this.distinct;
  }

  drained(): boolean {
    return this.outstanding === 0;
  }

  /** Events not done yet: accepted ones still owed a delivery, and arrivals still waiting for their 201. */
  openEvents(): number {
    return this.open.size;
  }

  take(): SoakSamples {
    const taken = this.pending;
    this.pending = { accepted: [], arrived: [], latenciesMs: [] };
    return taken;
  }

  counts(drainSeconds: number): DeliveryCounts {
    const expected = this.accepted * this.fanOut;
    return {
      arrivedInWindow: this.arrivedInWindow,
      expected,
      arrived: expected - this.outstanding,
      duplicates: this.duplicates,
      unmatched: this.unmatched,
      lost: this.outstanding,
      drainSeconds,
      perSecond: [...this.perSecond],
      latenciesMs: [],
    };
  }

  private sample(at: number, latencyMs: number): void {
    this.pending.arrived.push(at);
    this.pending.latenciesMs.push(Math.max(0, latencyMs));
  }

  private isDone(id: string): boolean {
    return this.recent.has(id) || this.older.has(id);
  }

  private state(id: string, at: number): Open {
    let state = this.open.get(id);
    if (!state) {
      state = { acceptedAt: null, paths: new Set(), firstAt: at };
      this.open.set(id, state);
    }
    return state;
  }

  private finishIfDone(id: string, state: Open): void {
    if (state.acceptedAt === null || state.paths.size < this.fanOut) return;
    this.open.delete(id);
    this.recent.add(id);
  }

  /** Each FORGET_MS: the older ids go, and arrivals that waited that long for a 201 are dropped. */
  private rotate(at: number): void {
    if (at - this.rotatedAt < FORGET_MS) return;
    this.older = this.recent;
    this.recent = new Set();
    for (const [id, state] of this.open)
      if (state.acceptedAt === null && state.firstAt <= at - FORGET_MS) {
        this.open.delete(id);
        this.unmatched += state.paths.size;
      }
    this.rotatedAt = at;
  }
}
