import type { ServerResponse } from "node:http";

/**
 * How long a request's work may wait for a shared resource (a transformation worker), as an
 * AbortSignal, let go of when the work ends (`clear`). It ends early when the client closes the
 * connection before its answer: nobody would read what the work gives, and while it waits it
 * holds what it came with (a try-it, its event of up to 1 MiB and its input built of it).
 *
 * Not `AbortSignal.timeout`: Node keeps a timeout signal that has an abort listener alive until
 * it fires, and with it whatever the listener holds (services/sender/src/deadline.ts, which this
 * repeats with the client's leaving added).
 */
export type Deadline = { signal: AbortSignal; clear: () => void };

/** The request as far as its deadline needs it: Express's `req.res`, absent outside a server. */
export type Answerable = { res?: ServerResponse | undefined };

export function requestDeadline(req: Answerable, ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  const res = req.res;
  // `close` comes after the answer too; only one before it was sent is the client leaving.
  const left = () => {
    if (!res?.writableFinished)
      controller.abort(new DOMException("The client closed the request", "AbortError"));
  };
  if (res?.destroyed) left();
  else res?.on("close", left);
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      res?.off("close", left);
    },
  };
}
