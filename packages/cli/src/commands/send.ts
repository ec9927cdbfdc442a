import { readFileSync } from "node:fs";
import { type Command, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { dim, green, json, out, red, table } from "../output.ts";

/** `--data`: JSON inline, `@file.json`, or `-` for stdin. */
export function readData(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {};
  let text = raw;
  try {
    if (raw === "-") text = readFileSync(0, "utf8");
    else if (raw.startsWith("@")) text = readFileSync(raw.slice(1), "utf8");
  } catch (err) {
    throw new UsageError(`--data ${raw}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--data is not JSON: ${(err as Error).message}`);
  }
  if (!data || typeof data !== "object" || Array.isArray(data))
    throw new UsageError('--data must be a JSON object, e.g. \'{"id": "in_1"}\'.');
  return data as Record<string, unknown>;
}

export const sendCommand: Command = {
  name: "send",
  usage:
    "send <type> --app APP [--data JSON | --data @file.json | --data -] [--idempotency-key KEY] [--dry-run]",
  summary: "Sends an event: every endpoint of the app that takes its type gets it.",
  help: `  --app APP              the app (id or uid)
  --data JSON            the payload, a JSON object: inline, @file.json, or - for stdin (default {})
  --idempotency-key KEY  sent again with the same key, the event is not made twice
  --dry-run              send nothing: which endpoints would receive it, and why not the others

Example:
  herald send invoice.paid --app acme --data '{"id": "in_1", "amount": 4200}'`,
  options: {
    app: { type: "string" },
    data: { type: "string" },
    "idempotency-key": { type: "string" },
    "dry-run": { type: "boolean" },
  },
  positionals: [1, 1],
  async run(ctx) {
    const app = str(ctx.values, "app");
    if (!app) throw new UsageError("--app is required: the app (id or uid) the event is for.");
    const data = readData(str(ctx.values, "data"));
    if (ctx.values["dry-run"]) {
      const dry = await ctx.herald().events.dryRun({ app, type: ctx.positionals[0]!, data });
      if (ctx.json) out(json(dry));
      else
        out(
          table(dry.endpoints, [
            { header: "ENDPOINT", value: (e) => e.endpoint },
            { header: "RECEIVES", value: (e) => (e.receives ? green("yes") : red("no")) },
            { header: "WHY NOT", value: (e) => e.why },
            { header: "URL", value: (e) => e.url, max: 50 },
          ]),
        );
      return 0;
    }
    const key = str(ctx.values, "idempotency-key");
    const event = await ctx
      .herald()
      .events.send({ app, type: ctx.positionals[0]!, data }, key ? { idempotencyKey: key } : undefined);
    if (ctx.json) out(json(event));
    else
      out(
        `${event.id}\n${dim(`Sent ${event.type} to ${event.app}. Follow it: herald events show ${event.id}`)}`,
      );
    return 0;
  },
};
