import {
  type Attempt,
  type Herald,
  HeraldConnectionError,
  HeraldNotFoundError,
  HeraldServerError,
} from "@herald/sdk";
import { type Command, type Context, int, oneOf, sleep, str } from "../command.ts";
import { dim, note, out, status, time, yellow } from "../output.ts";
import { outcome } from "./resources.ts";

/**
 * `herald tail`: each delivery attempt as it gets its result. New attempts are found by polling
 * the list for ids newer than a cursor (`ending_before`). The cursor trails the newest attempt
 * seen by a few seconds, and what was seen is remembered, so an attempt committed a little
 * after a newer one (ids come from many processes) is still found, and none shows twice. One
 * still pending (scheduled, or in flight) is watched, looked up again once due, and printed
 * when it has a result. Attempts made before tail started, retries scheduled then included,
 * are not followed.
 */
const POLL_MS = 1000;
/** How far the cursor trails the newest attempt seen. */
const OVERLAP_MS = 5000;
/** New attempts read a poll, at most: after a pause (a laptop asleep), tail catches up in steps. */
const READ_PER_POLL = 1000;
/** Pending attempts watched at most; past that the oldest are let go, with a note. */
const WATCH_MAX = 5000;
/** Watched attempts looked up again per poll, at most, the longest waiting first. */
const LOOKUPS_PER_POLL = 25;

type Filter = { app?: string; endpoint?: string; event?: string };

function line(a: Attempt): string {
  const ms = a.duration_ms === null ? "" : ` ${a.duration_ms}ms`;
  return `${time(a.completed_at ?? a.scheduled_at)}  ${status(a.status).padEnd(9)}  ${outcome(a).padEnd(16)}${dim(ms.padEnd(8))}  #${a.attempt_number}  ${a.event}  ${a.endpoint}  ${dim(a.url)}`;
}

class Tail {
  /** Pending attempts, by id: when each is due. */
  private readonly watched = new Map<string, number>();
  /** Attempts taken within the overlap, by id: when each was made. */
  private readonly seen = new Map<string, number>();
  private cursor: string | undefined;
  private warned = false;

  constructor(
    private readonly herald: Herald,
    private readonly filter: Filter,
    private readonly print: (a: Attempt) => void,
  ) {}

  /** From the newest attempt now, so only later ones are shown; `last` of them printed first. */
  async start(last: number): Promise<void> {
    const page = await this.herald.attempts
      .list({ ...this.filter, limit: Math.max(1, Math.min(100, last)) })
      .firstPage();
    this.cursor = page.data[0]?.id;
    if (last > 0) for (const a of [...page.data].reverse()) this.take(a);
  }

  private take(a: Attempt): void {
    if (this.seen.has(a.id)) return;
    this.seen.set(a.id, Date.parse(a.created_at));
    if (a.status !== "pending") {
      this.print(a);
      return;
    }
    this.watched.set(a.id, Date.parse(a.scheduled_at));
    if (this.watched.size > WATCH_MAX) {
      this.watched.delete(this.watched.keys().next().value as string);
      if (!this.warned)
        note(yellow(`Watching over ${WATCH_MAX} pending attempts: the oldest are no longer followed.`));
      this.warned = true;
    }
  }

  async poll(): Promise<void> {
    // Newer than the cursor, oldest first, page after page.
    const fresh = this.cursor
      ? await this.herald.attempts
          .list({ ...this.filter, limit: 100, ending_before: this.cursor })
          .toArray({ max: READ_PER_POLL })
      : (await this.herald.attempts.list({ ...this.filter, limit: 100 }).firstPage()).data.reverse();
    for (const a of fresh) this.take(a);
    // The cursor moves to the newest attempt made OVERLAP_MS before the newest seen.
    const newest = Math.max(...this.seen.values());
    const settled = fresh.filter((a) => Date.parse(a.created_at) <= newest - OVERLAP_MS).at(-1);
    if (settled) {
      this.cursor = settled.id;
      const before = Date.parse(settled.created_at);
      for (const [id, at] of this.seen) if (at < before) this.seen.delete(id);
    }
    await this.lookUpDue();
  }

  private async lookUpDue(): Promise<void> {
    const due = [...this.watched].filter(([, at]) => at <= Date.now()).slice(0, LOOKUPS_PER_POLL);
    await Promise.all(
      due.map(async ([id]) => {
        // Still pending, or not read now: to the back of the line, so others get their turn.
        this.watched.delete(id);
        const a = await this.herald.attempts.retrieve(id).catch((err) => {
          if (err instanceof HeraldNotFoundError) return "gone" as const;
          return null;
        });
        if (a === "gone") return;
        if (a && a.status !== "pending") return this.print(a);
        this.watched.set(id, a ? Date.parse(a.scheduled_at) : Date.now() + POLL_MS);
      }),
    );
  }
}

export const tailCommand: Command = {
  name: "tail",
  handlesStop: true,
  usage: "tail [--app APP] [--endpoint EP] [--event EVT] [--status STATUS] [--last N]",
  summary: "Prints delivery attempts as they get their results, until Ctrl-C.",
  help: `  --app APP          one app's (id or uid)
  --endpoint EP      to this endpoint
  --event EVT        of this event
  --status STATUS    only succeeded, only failed, or only cancelled
  --last N           the last N attempts first (default 0)

With --json, one attempt per line (NDJSON).`,
  options: {
    app: { type: "string" },
    endpoint: { type: "string" },
    event: { type: "string" },
    status: { type: "string" },
    last: { type: "string" },
  },
  async run(ctx: Context) {
    const filter = {
      app: str(ctx.values, "app"),
      endpoint: str(ctx.values, "endpoint"),
      event: str(ctx.values, "event"),
    };
    const only = oneOf(ctx.values, "status", ["succeeded", "failed", "cancelled"] as const);
    const last = int(ctx.values, "last", 0, 0, 100);
    const print = (a: Attempt) => {
      if (only && a.status !== only) return;
      out(ctx.json ? JSON.stringify(a) : line(a));
    };
    const tail = new Tail(ctx.herald(), filter, print);
    await tail.start(last);
    note(dim("Waiting for attempts… (Ctrl-C to stop)"));
    while (!ctx.stopped.aborted) {
      // The gateway restarting or overloaded (its retries spent): said, and tried again.
      await tail.poll().catch((err) => {
        if (!(err instanceof HeraldConnectionError || err instanceof HeraldServerError)) throw err;
        note(yellow(`${err.message}; trying again.`));
      });
      await sleep(POLL_MS, ctx.stopped);
    }
    return 0;
  },
};
