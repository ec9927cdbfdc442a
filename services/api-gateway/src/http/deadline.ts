import type { ServerResponse } from "node:http";
import { type Deadline, deadline } from "@herald/runtime";

/**
 * How long a request's work may wait for a shared resource (a transformation worker), as an
 * AbortSignal let go of when the work ends (`clear`; @herald/runtime's deadline, whose comment
 * says why not `AbortSignal.timeout`). It ends early when the client closes the connection before
 * its answer: nobody would read what the work gives, and while it waits it holds what it came
 * with (a try-it, its event of up to 1 MiB and its input built of it).
 */

/** The request as far as its deadline needs it: Express's `req.res`, absent outside a server. */
export type Answerable = { res?: ServerResponse | undefined };

export function requestDeadline(req: Answerable, ms: number): Deadline {
  const limit = deadline(ms);
  const res = req.res;
  // `close` comes after the answer too; only one before it was sent is the client leaving.
  const left = () => {
    if (!res?.writableFinished) limit.abort(new DOMException("The client closed the request", "AbortError"));
  };
  if (res?.destroyed) left();
  else res?.on("close", left);
  return {
    ...limit,
    clear: () => {
      limit.clear();
      res?.off("close", left);
    },
  };
}
