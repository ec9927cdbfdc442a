import { TransportError } from "./types.ts";

/**
 * Connections of one transport, one per destination (its host, port and credentials: the key),
 * at most `max` of them: opening one more closes the one used longest ago. A connection that
 * fails is dropped (`drop`) and the next send opens a new one. Opening is shared: sends that
 * arrive while a connection is being opened wait for the same one.
 */
export class ConnectionPool<C> {
  private readonly entries = new Map<string, Promise<C>>();

  constructor(
    private readonly max: number,
    private readonly closeConnection: (connection: C) => Promise<void> | void,
  ) {}

  /** The destination's connection, opened by `open` if there is none (or it was dropped). */
  get(key: string, open: () => Promise<C>): Promise<C> {
    const existing = this.entries.get(key);
    if (existing) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, existing);
      return existing;
    }
    const opening = open();
    this.entries.set(key, opening);
    // A connection that could not be opened is not kept: the next send tries again.
    opening.catch(() => {
      if (this.entries.get(key) === opening) this.entries.delete(key);
    });
    while (this.entries.size > this.max) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, Promise<C>];
      this.entries.delete(oldestKey);
      void oldest.then((c) => this.closeConnection(c)).catch(() => {});
    }
    return opening;
  }

  /** Forgets the destination's connection if it is still this one, and closes it. */
  drop(key: string, connection: C): void {
    const current = this.entries.get(key);
    if (!current) return;
    void current
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
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((p) => p.then((c) => this.closeConnection(c)).catch(() => {})));
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
