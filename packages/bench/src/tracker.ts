import type { DeliveryCounts, SoakSamples } from "./protocol.ts";
import { countInSecond } from "./stats.ts";

/** What a delivery job's senders and receivers tell, and what the job reads back (this one, soakTracker.ts). */
export interface Tracking {
  accept(id: string, at: number): void;
  arrive(id: string, path: string, at: number): void;
  /** Distinct deliveries arrived so far. */
  arrivals(): number;
  /** Whether every delivery of every accepted event has arrived. */
  drained(): boolean;
  counts(drainSeconds: number): DeliveryCounts;
  /** A soak's: what happened since the last call, for each progress report. */
  take?(): SoakSamples;
}

type EventState = {
  /** When its `201` came back (ms, the job's clock); null while the POST is still out. */
  acceptedAt: number | null;
  /** When each distinct endpoint received it. */
  arrivals: number[];
  waiter: (() => void) | null;
};

/**
 * Which events a job's sender got a `201` for, and which of their deliveries reached the
 * receivers. A delivery is an event id (the `webhook-id` header) at a path; a second request for
 * the same pair is a duplicate (at-least-once) and counts once. An arrival can beat its own
 * `201` back to this process, so either may come first. Times are ms since the job started.
 */
export class DeliveryTracker implements Tracking {
  private readonly events = new Map<string, EventState>();
  private readonly seen = new Set<string>();
  private readonly perSecond: number[] = [];
  private accepted = 0;
  /** Deliveries of accepted events that have not arrived yet. */
  private outstanding = 0;
  private duplicates = 0;
  private arrivedInWindow = 0;

  constructor(
    private readonly fanOut: number,
    private readonly window: { start: number; end: number },
  ) {}

  accept(id: string, at: number): void {
    const state = this.state(id);
    if (state.acceptedAt !== null) return;
    state.acceptedAt = at;
    this.accepted++;
    this.outstanding += Math.max(0, this.fanOut - state.arrivals.length);
    this.wake(state);
  }

  arrive(id: string, path: string, at: number): void {
    const key = `${id} ${path}`;
    if (this.seen.has(key)) {
      this.duplicates++;
      return;
    }
    this.seen.add(key);
    const state = this.state(id);
    state.arrivals.push(at);
    countInSecond(this.perSecond, at);
    if (at >= this.window.start && at < this.window.end) this.arrivedInWindow++;
    if (state.acceptedAt !== null && state.arrivals.length <= this.fanOut) this.outstanding--;
    this.wake(state);
  }

  /** Resolves once every endpoint has received event `id`. */
  delivered(id: string): Promise<void> {
    const state = this.state(id);
    if (this.complete(state)) return Promise.resolve();
    return new Promise((resolve) => {
      state.waiter = resolve;
    });
  }

  /** Distinct deliveries arrived so far, of any event (accepted or not yet). */
  arrivals(): number {
    return this.seen.size;
  }

  /** Whether every delivery of every accepted event has arrived. */
  drained(): boolean {
    return this.outstanding === 0;
  }

  counts(drainSeconds: number): DeliveryCounts {
    const expected = this.accepted * this.fanOut;
    const latenciesMs: number[] = [];
    for (const state of this.events.values()) {
      const accepted = state.acceptedAt;
      if (accepted === null || accepted < this.window.start || accepted >= this.window.end) continue;
      // An arrival a hair before its 201 was processed here is as good as instant.
      for (const at of state.arrivals) latenciesMs.push(Math.max(0, at - accepted));
    }
    const arrived = expected - this.outstanding;
    return {
      arrivedInWindow: this.arrivedInWindow,
      expected,
      arrived,
      duplicates: this.duplicates,
      lost: this.outstanding,
      drainSeconds,
      perSecond: [...this.perSecond],
      latenciesMs,
    };
  }

  private state(id: string): EventState {
    let state = this.events.get(id);
    if (!state) {
      state = { acceptedAt: null, arrivals: [], waiter: null };
      this.events.set(id, state);
    }
    return state;
  }

  private complete(state: EventState): boolean {
    return state.acceptedAt !== null && state.arrivals.length >= this.fanOut;
  }

  private wake(state: EventState): void {
    if (state.waiter && this.complete(state)) {
      state.waiter();
      state.waiter = null;
    }
  }
}
