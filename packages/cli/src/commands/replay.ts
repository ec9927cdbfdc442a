import type { Herald, Replay, ReplayPreview } from "@herald/sdk";
import { type Command, type Context, since, sleep, str } from "../command.ts";
import { CliError, EXIT } from "../errors.ts";
import { bold, dim, green, json, note, out, red, status, table, time, yellow } from "../output.ts";

/**
 * `herald replay <endpoint>`: says how many failed deliveries and which (the API's replay
 * preview), then queues them and follows the replay with a progress bar until every one has a
 * result again.
 */
const POLL_MS = 500;

function bar(done: number, total: number, width = 30): string {
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
}

/** One progress line: rewritten in place on a terminal, a new line on each change elsewhere. */
function progress(replay: Replay, last: { text: string }): void {
  const attempted = replay.attempted ?? 0;
  const text = `${bar(attempted, replay.queued)} ${attempted}/${replay.queued} attempted, ${green(String(replay.succeeded ?? 0))} succeeded, ${red(String(replay.failed ?? 0))} failed`;
  if (text === last.text) return;
  last.text = text;
  if (process.stderr.isTTY) process.stderr.write(`\r${text}\x1b[K`);
  else note(text);
}

function printPreview(ctx: Context, preview: ReplayPreview, dryRun: boolean): void {
  if (ctx.json && dryRun) return void out(json(preview));
  if (ctx.json) return;
  const verb = dryRun ? "would replay" : "Replaying";
  note(
    `${bold(`${preview.count}${preview.count_capped ? " or more" : ""}`)} failed deliver${preview.count === 1 ? "y" : "ies"} of ${preview.endpoint}: ${verb}${preview.count ? ":" : " nothing."}`,
  );
  if (preview.deliveries.length)
    note(
      table(preview.deliveries, [
        { header: "EVENT", value: (d) => d.event },
        { header: "TYPE", value: (d) => d.event_type },
        { header: "ATTEMPTS", value: (d) => d.attempts },
        { header: "FAILED AT", value: (d) => time(d.failed_at) },
      ]),
    );
  if (preview.has_more)
    note(
      dim(
        `… and ${preview.count - preview.deliveries.length}${preview.count_capped ? " or more" : ""} more.`,
      ),
    );
}

/**
 * Waits until the replay is over: each queued delivery attempted again, or the replay
 * `completed` with none of its attempts pending (the rest were never tried: their endpoint was
 * disabled or deleted, or their events erased, meanwhile).
 */
async function follow(ctx: Context, herald: Herald, started: Replay): Promise<Replay> {
  const last = { text: "" };
  const over = (r: Replay) =>
    (r.attempted ?? 0) >= r.queued || (r.status === "completed" && (r.pending ?? 0) === 0);
  let replay = started;
  while (!over(replay)) {
    progress(replay, last);
    await sleep(POLL_MS, ctx.stopped);
    if (ctx.stopped.aborted) {
      note(`\nStopped waiting; the replay goes on. Follow it: herald replays show ${replay.id}`);
      throw new CliError("interrupted", EXIT.interrupted);
    }
    replay = await herald.replays.retrieve(replay.id, { signal: ctx.stopped });
  }
  progress(replay, last);
  if (process.stderr.isTTY) process.stderr.write("\n");
  return replay;
}

export const replayCommand: Command = {
  name: "replay",
  handlesStop: true,
  usage: "replay <endpoint> [--since TIME] [--event EVT] [--dry-run] [--no-wait]",
  summary: "Replays an endpoint's failed deliveries, and waits until each has been tried again.",
  help: `  --since TIME       only those that failed since: ISO 8601, unix seconds, or 30m, 2h, 7d ago
  --event EVT        only this event's delivery
  --dry-run          say how many and which, and queue nothing
  --no-wait          queue them and return; follow with \`herald replays show <id>\`

Exit code 6 when some replayed deliveries failed again (they retry on the endpoint's schedule),
or were not tried (the endpoint disabled or deleted, or their events erased, meanwhile).`,
  options: {
    since: { type: "string" },
    event: { type: "string" },
    "dry-run": { type: "boolean" },
    "no-wait": { type: "boolean" },
  },
  positionals: [1, 1],
  async run(ctx) {
    const herald = ctx.herald();
    const endpoint = ctx.positionals[0]!;
    const raw = str(ctx.values, "since");
    const filter = { since: raw === undefined ? undefined : since(raw), event: str(ctx.values, "event") };
    const dryRun = ctx.values["dry-run"] === true;
    const signal = { signal: ctx.stopped };
    const preview = await herald.endpoints.previewReplay(endpoint, filter, signal);
    printPreview(ctx, preview, dryRun);
    if (preview.endpoint_disabled) note(dim("The endpoint is disabled: enable it before replaying."));
    // Nothing to replay: no replay is made (nor its replay.completed notice).
    if (dryRun || preview.count === 0) {
      if (ctx.json && !dryRun) out(json(preview));
      return 0;
    }
    const started = await herald.endpoints.replay(endpoint, filter, signal);
    if (ctx.values["no-wait"]) {
      out(ctx.json ? json(started) : `${started.id} ${status(started.status)}: ${started.queued} queued`);
      return 0;
    }
    const done = await follow(ctx, herald, started);
    const untried = Math.max(0, done.queued - (done.attempted ?? 0));
    if (ctx.json) out(json(done));
    else
      out(
        `${done.id} ${status(done.status)}: ${done.queued} queued, ${done.attempted ?? 0} attempted, ${done.succeeded ?? 0} succeeded, ${done.failed ?? 0} failed`,
      );
    if (untried)
      note(
        yellow(
          `${untried} not tried: the endpoint was disabled or deleted, or their events erased, meanwhile.`,
        ),
      );
    return (done.failed ?? 0) > 0 || untried > 0 ? EXIT.replayFailures : 0;
  },
};
