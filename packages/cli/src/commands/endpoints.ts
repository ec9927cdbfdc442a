import { readFileSync } from "node:fs";
import type { Endpoint, TransformationTest } from "@herald/sdk";
import { type Command, type Context, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { clean, dim, fields, json, out, yellow } from "../output.ts";
import { readData } from "./send.ts";

/**
 * Making and changing endpoints from the command line, their transformation from a file
 * (docs/transformations.md), and trying a transformation before saving it.
 */

const TRANSFORMATION_HELP = `  --transformation-file FILE  its transformation: JavaScript defining function handler(webhook),
                              read from FILE (- for stdin); compiled when saved`;

/** `--transformation-file FILE` (`-`: stdin): the source, as it is. */
function readSource(ctx: Context): string | undefined {
  const path = str(ctx.values, "transformation-file");
  if (path === undefined) return undefined;
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (err) {
    throw new UsageError(`--transformation-file ${path}: ${(err as Error).message}`);
  }
}

/** The fields create and update share, from their flags (`--url` is the gateway's, as for every command). */
function endpointParams(ctx: Context) {
  const types = str(ctx.values, "event-types");
  const description = str(ctx.values, "description");
  const url = str(ctx.values, "endpoint-url");
  const source = readSource(ctx);
  return {
    ...(url !== undefined ? { url } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(types !== undefined ? { event_types: types.split(",").filter(Boolean) } : {}),
    ...(source !== undefined ? { transformation: source } : {}),
  };
}

/** The endpoint's fields, its transformation apart as the code it is. */
export function showEndpoint(endpoint: Endpoint, extra = ""): string {
  const code = endpoint.transformation;
  return [
    fields(endpoint as unknown as Record<string, unknown>, ["transformation"]),
    extra,
    code ? `${dim("transformation")}\n${clean(code)}` : `${dim("transformation")}  -`,
  ]
    .filter(Boolean)
    .join("\n");
}

const SHARED_OPTIONS = {
  "event-types": { type: "string" },
  description: { type: "string" },
  "transformation-file": { type: "string" },
} as const;

/** What a try-it would send, or that it would cancel: for people (`--json` prints the answer). */
function printRequest(test: TransformationTest): void {
  if (test.cancelled || !test.request) {
    out(yellow("Cancelled: nothing would be sent, and the delivery would end cancelled."));
    return;
  }
  const { method, url, headers, body } = test.request;
  const lines = Object.entries(headers).map(([name, value]) => `${dim(`${name}:`)} ${clean(value)}`);
  out([`${method} ${clean(url)}`, ...lines, "", clean(body)].join("\n"));
}

const UPDATE_USAGE =
  "endpoints update <endpoint> [--endpoint-url URL] [--event-types a,b] [--description TEXT] [--transformation-file FILE | --no-transformation]";

export const endpointCommands: Command[] = [
  {
    name: "endpoints create",
    usage:
      "endpoints create <url> --app APP [--event-types a,b] [--description TEXT] [--transformation-file FILE]",
    summary: "Makes an endpoint of an app, with its transformation from a file.",
    help: `  <url>                       where its events go
  --app APP                   the app (id or uid)
  --event-types a,b           only these types (default: all)
  --description TEXT          what it is for
${TRANSFORMATION_HELP}

Example:
  herald endpoints create https://hooks.slack.com/services/T0/B0/x --app acme \\
    --event-types invoice.paid --transformation-file slack.js`,
    options: { ...SHARED_OPTIONS, app: { type: "string" } },
    positionals: [1, 1],
    async run(ctx) {
      const app = str(ctx.values, "app");
      if (!app) throw new UsageError("--app is required: the app (id or uid) the endpoint is of.");
      const url = ctx.positionals[0]!;
      const endpoint = await ctx.herald().endpoints.create({ app, url, ...endpointParams(ctx) });
      out(ctx.json ? json(endpoint) : showEndpoint(endpoint));
      return 0;
    },
  },
  {
    name: "endpoints update",
    usage: UPDATE_USAGE,
    summary: "Changes an endpoint: what is given replaces what it had.",
    help: `  --endpoint-url URL          where its events go now
  --event-types a,b           only these types ("" for all)
  --description TEXT          what it is for
${TRANSFORMATION_HELP}
  --no-transformation         remove its transformation`,
    options: {
      ...SHARED_OPTIONS,
      "endpoint-url": { type: "string" },
      "no-transformation": { type: "boolean" },
    },
    positionals: [1, 1],
    async run(ctx) {
      const params = endpointParams(ctx);
      if (ctx.values["no-transformation"]) {
        if ("transformation" in params)
          throw new UsageError("--transformation-file or --no-transformation: one, not both.");
        Object.assign(params, { transformation: null });
      }
      if (!Object.keys(params).length) throw new UsageError(`Nothing to change: herald ${UPDATE_USAGE}`);
      const endpoint = await ctx.herald().endpoints.update(ctx.positionals[0]!, params);
      out(ctx.json ? json(endpoint) : showEndpoint(endpoint));
      return 0;
    },
  },
  {
    name: "endpoints test-transformation",
    usage:
      "endpoints test-transformation <endpoint> --event-type TYPE [--data JSON | --data @file.json] [--transformation-file FILE]",
    summary: "Runs an endpoint's transformation on an event, sending nothing: the request it would make.",
    help: `  --event-type TYPE           on this type's example payload
  --data JSON                 on this payload instead: inline, @file.json, or - for stdin
  --transformation-file FILE  try this code instead of the saved one (- for stdin)

Prints the request that would be sent (method and URL, headers, body), or that it would cancel
the delivery; a transformation that fails prints its error and line and exits 1.`,
    options: {
      "event-type": { type: "string" },
      data: { type: "string" },
      "transformation-file": { type: "string" },
    },
    positionals: [1, 1],
    async run(ctx) {
      const type = str(ctx.values, "event-type");
      if (!type) throw new UsageError("--event-type is required: the event type to run it on.");
      const raw = str(ctx.values, "data");
      const source = readSource(ctx);
      const test = await ctx.herald().endpoints.testTransformation(ctx.positionals[0]!, {
        ...(raw === undefined ? { event_type: type } : { event: { type, data: readData(raw) } }),
        ...(source !== undefined ? { transformation: source } : {}),
      });
      if (ctx.json) out(json(test));
      // The message names the line already: `TypeError: … (line 3)`.
      if (test.error) throw new CliError(`transformation_error (${test.error.cause}): ${test.error.message}`);
      if (!ctx.json) printRequest(test);
      return 0;
    },
  },
];
