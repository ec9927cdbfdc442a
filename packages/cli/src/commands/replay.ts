import type { Herald, Replay, ReplayPreview } from "@herald/sdk";
import { type Command, type Context, since, sleep, str } from "../command.ts";
import { CliError, EXIT } from "../errors.ts";
import { bold, dim, green, json, note, out, red, status, table, time } from "../output.ts";

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
    `${bold(String(preview.count))} failed deliver${preview.count === 1 ? "y" : "ies"} of ${preview.endpoint}: ${verb}${preview.count ? ":" : " nothing."}`,
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
  if (preview.has_more) note(dim(`… and ${preview.count - preview.deliveries.length} more.`));
}

/** Waits until each queued delivery was attempted again; stops early if the endpoint goes. */
async function follow(ctx: Context, herald: Herald, started: Replay): Promise<Replay> {
  const last = { text: "" };
  let replay = started;
  for (let n = 0; (replay.attempted ?? 0) < replay.queued; n++) {
    progress(replay, last);
    await sleep(POLL_MS, ctx.stopped);
    if (ctx.stopped.aborted) {
      note(`\nStopped waiting; the replay goes on. Follow it: herald replays show ${replay.id}`);
      throw new CliError("interrupted", EXIT.interrupted);
    }
    replay = await herald.replays.retrieve(replay.id);
    // Every 10th poll: a disabled or deleted endpoint leaves the rest untried.
    if (n % 10 === 9 && replay.status === "completed") {
      const endpoint = await herald.endpoints.retrieve(replay.endpoint).catch(() => null);
      if (!endpoint || endpoint.disabled) {
        note(`\nThe endpoint was ${endpoint ? "disabled" : "deleted"}: the rest will not be tried.`);
        break;
      }
    }
  }
  progress(replay, last);
  if (process.stderr.isTTY) process.stderr.write("\n");
  return replay;
}

export const replayCommand: Command = {
  name: "replay",
  usage: "replay <endpoint> [--since TIME] [--event EVT] [--dry-run] [--no-wait]",
  summary: "Replays an endpoint's failed deliveries, and waits until each has been tried again.",
  help: `  --since TIME       only those that failed since: ISO 8601, unix seconds, or 30m, 2h, 7d ago
  --event EVT        only this event's delivery
  --dry-run          say how many and which, and queue nothing
  --no-wait          queue them and return; follow with \`herald replays show <id>\`

Exit code 6 when some replayed deliveries failed again (they retry on the endpoint's schedule).`,
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
    const preview = await herald.endpoints.previewReplay(endpoint, filter);
    printPreview(ctx, preview, dryRun);
    if (dryRun) {
      if (preview.endpoint_disabled) note(dim("The endpoint is disabled: enable it before replaying."));
      return 0;
    }
    const started = await herald.endpoints.replay(endpoint, filter);
    const done = ctx.values["no-wait"] || started.queued === 0 ? started : await follow(ctx, herald, started);
    if (ctx.json) out(json(done));
    else
      out(
        `${done.id} ${status(done.status)}: ${done.queued} queued, ${done.attempted ?? 0} attempted, ${done.succeeded ?? 0} succeeded, ${done.failed ?? 0} failed`,
      );
    return (done.failed ?? 0) > 0 ? EXIT.replayFailures : 0;
  },
};
