/**
 * A deadline as an AbortSignal, let go of when the work it bounds ends (`clear`).
 *
 * Not `AbortSignal.timeout`: Node keeps a timeout signal that has an abort listener alive until
 * it fires, and with it whatever the listener holds. got adds one to each request given a
 * signal and removes it only when the request is destroyed, which a response read to its end
 * is not (got's streams do not destroy themselves). With the attempt's 15 s, every transformed
 * request, its response and its buffers stayed on the heap for 15 s: at 300 deliveries/s, a
 * third of the sender's time went to collecting garbage (docs/benchmarks-log.md). The sender's
 * attempts and the gateway's waits for a transformation worker use it.
 */
export type Deadline = {
  signal: AbortSignal;
  /** The work ended: the timer goes, and with it what the signal's listeners hold. */
  clear: () => void;
  /** Ends it now, for another reason than its time (the client left). */
  abort: (reason: unknown) => void;
};

export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return {
    signal: controller.signal,
    clear: () => clearTimeout(timer),
    abort: (reason) => controller.abort(reason),
  };
}
