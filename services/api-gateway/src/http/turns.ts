/**
 * One at a time per key: a queue of turns for each key that has one going. The gateway handles
 * an account's large requests (bodies over LARGE_BODY_BYTES) in turns, so that one account's
 * burst of megabyte events is parsed, checked and written one after another, and every other
 * account's requests run between them instead of behind all of them.
 */
export const LARGE_BODY_BYTES = 64 * 1024;

export class Turns {
  private readonly queues = new Map<string, (() => void)[]>();

  /** Resolves when it is `key`'s turn, with the function that ends it (call it once). */
  async take(key: string): Promise<() => void> {
    const queue = this.queues.get(key);
    if (!queue) this.queues.set(key, []);
    else await new Promise<void>((go) => queue.push(go));
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const waiting = this.queues.get(key)!;
      const next = waiting.shift();
      if (next) next();
      else this.queues.delete(key);
    };
  }

  /** Keys with a turn going. */
  size(): number {
    return this.queues.size;
  }
}

/**
 * Whether a request's body may be large: over LARGE_BODY_BYTES, of a length not said, or
 * compressed (a kilobyte of gzip may hold the megabyte the body limit allows).
 */
export function largeBody(headers: {
  "content-length"?: string;
  "transfer-encoding"?: string;
  "content-encoding"?: string;
}): boolean {
  if (headers["transfer-encoding"] !== undefined) return true;
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  if (encoding && encoding !== "identity") return true;
  return Number(headers["content-length"] ?? 0) > LARGE_BODY_BYTES;
}
