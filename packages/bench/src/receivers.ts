import { createServer, type ServerResponse } from "node:http";
import type { Tracking } from "./tracker.ts";

/**
 * The load generator's local receivers: one HTTP server standing in for every endpoint the
 * benchmark creates (`/<app uid>/<n>`). Each request is answered `200`; arrivals at the paths a
 * job is counting go to that job's tracker, and paths a job made hang are answered only later.
 */

/** What a job counts at the receivers: arrivals under `pathPrefix`, and whether those hang. */
export type Receiving = {
  pathPrefix: string;
  tracker: Tracking;
  clock: () => number;
  hold?: Hold;
};

/**
 * A hanging endpoint: each request is answered after `holdMs`, as a customer's server that takes
 * its time would. Counts the requests it holds at once, the figure that shows whether Herald
 * bounds one endpoint's attempts in flight. `release()` answers every held request now, and each
 * later one at once, so the job's backlog drains when its window is over.
 */
export class Hold {
  private readonly held = new Set<() => void>();
  private released = false;
  /** The most requests held at once. */
  mostInFlight = 0;

  constructor(private readonly holdMs: number) {}

  answer(respond: () => void): void {
    if (this.released) {
      respond();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      if (this.held.delete(done)) respond();
    };
    const timer = setTimeout(done, this.holdMs);
    this.held.add(done);
    this.mostInFlight = Math.max(this.mostInFlight, this.held.size);
  }

  release(): void {
    this.released = true;
    for (const done of [...this.held]) done();
  }
}

const counting = new Set<Receiving>();

/** Counts (and holds, with `hold`) arrivals under `r.pathPrefix` until the returned function is called. */
export function receive(r: Receiving): () => void {
  counting.add(r);
  return () => {
    counting.delete(r);
    r.hold?.release();
  };
}

function ok(res: ServerResponse): void {
  if (!res.destroyed) res.writeHead(200, { "content-type": "text/plain" }).end("ok");
}

export const receivers = createServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0]!;
  const id = req.headers["webhook-id"];
  let hold: Hold | undefined;
  for (const r of counting) {
    if (!path.startsWith(r.pathPrefix)) continue;
    if (typeof id === "string") r.tracker.arrive(id, path, r.clock());
    hold = r.hold;
  }
  req.resume();
  req.on("end", () => (hold ? hold.answer(() => ok(res)) : ok(res)));
});
// 5 min: longer than any lull between scenarios, so the senders never reuse a socket just as
// the receiver closes it (a reset would be a failed attempt, retried 5 s later).
receivers.keepAliveTimeout = 300_000;
