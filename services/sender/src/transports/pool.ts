import { TransportError } from "./types.ts";

/**
 * How long a send may hold a connection (the sender's attempt timeout, set once at start by
 * transports/index.ts): a connection used within it may carry a send still in flight, so it is
 * not closed to make room. Connections idle for `IDLE_MS` are closed: an idle connection does
 * nothing for anyone, and a hostile server could keep feeding it.
 */
let busyMs = 30_000;
const IDLE_MS = 60_000;

export function configurePools(options: { busyMs: number }): void {
  busyMs = options.busyMs;
}

type Entry<C> = { connection: Promise<C>; usedAt: number };

/**
 * Connections of one transport, one per destination (its host, port and credentials: the key).
 * Past `max`, opening one more closes the one used longest ago, but only once it is idle
 * (unused for the longest a send may take): evicting a connection with a send in flight would
 * fail another endpoint's attempt, which one tenant's many destinations must not be able to
 * do. Past four times `max` the oldest goes regardless. A connection that fails is dropped
 * (`drop`) and the next send opens a new one. Opening is shared: sends that arrive while a
 * connection is being opened wait for the same one.
 */
export class ConnectionPool<C> {
  private readonly entries = new Map<string, Entry<C>>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly max: number,
    private readonly closeConnection: (connection: C) => Promise<void> | void,
  ) {}

  /** The destination's connection, opened by `open` if there is none (or it was dropped). */
  get(key: string, open: () => Promise<C>): Promise<C> {
    const now = Date.now();
    const existing = this.entries.get(key);
    if (existing) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      existing.usedAt = now;
      this.entries.set(key, existing);
      return existing.connection;
    }
    const opening = open();
    this.entries.set(key, { connection: opening, usedAt: now });
    // A connection that could not be opened is not kept: the next send tries again.
    opening.catch(() => {
      if (this.entries.get(key)?.connection === opening) this.entries.delete(key);
    });
    this.makeRoom(now);
    this.sweeper ??= setInterval(() => this.closeIdle(Date.now()), IDLE_MS / 2).unref();
    return opening;
  }

  /**
   * The destination's connection for one send, within that send's deadline (`signal`). Sends
   * arriving while a connection opens share the opening, which ends with the deadline of the
   * send that started it: a send whose own deadline has not passed when another's opening times
   * out opens one of its own.
   */
  async acquire(key: string, open: () => Promise<C>, signal: AbortSignal, where: string): Promise<C> {
    let mine = false;
    const opening = () => {
      mine = true;
      return open();
    };
    for (;;) {
      try {
        return await untilAborted(this.get(key, opening), signal, where);
      } catch (err) {
        const theirs = !mine && err instanceof TransportError && err.kind === "timeout" && !signal.aborted;
        if (!theirs) throw err;
      }
    }
  }

  private makeRoom(now: number): void {
    while (this.entries.size > this.max) {
      const idle = [...this.entries].find(([, e]) => now - e.usedAt > busyMs);
      const [key] = idle ?? (this.entries.size > this.max * 4 ? this.entries.entries().next().value! : []);
      if (key === undefined) return;
      this.evict(key);
    }
  }

  private closeIdle(now: number): void {
    for (const [key, entry] of this.entries) if (now - entry.usedAt > IDLE_MS) this.evict(key);
    if (!this.entries.size && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  private evict(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    void entry.connection.then((c) => this.closeConnection(c)).catch(() => {});
  }

  /** Forgets the destination's connection if it is still this one, and closes it. */
  drop(key: string, connection: C): void {
    const current = this.entries.get(key);
    if (!current) return;
    void current.connection
      .then((c) => {
        if (c !== connection) return;
        if (this.entries.get(key) === current) this.entries.delete(key);
        return this.closeConnection(c);
      })
      .catch(() => {});
  }

  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.connection.then((c) => this.closeConnection(c)).catch(() => {})));
  }
}

/** The key of a destination's connection: who connects where, credentials included. */
export function connectionKey(
  parts: (string | number | boolean | null)[],
  credentials: { username: string; password: string } | null,
): string {
  return JSON.stringify([...parts, credentials?.username ?? null, credentials?.password ?? null]);
}

/** Rejects when the signal aborts, with a `timeout` TransportError; for awaiting a client's promise. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) return Promise.reject(timeoutError(what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(timeoutError(what));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function timeoutError(what: string): TransportError {
  return new TransportError("timeout", `no acknowledgement from ${what} in time`);
}
