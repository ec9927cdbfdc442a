import type { App, Attempt, Endpoint, Event, EventType, Herald, PageIterator } from "@herald/sdk";
import { type Command, type Context, int, oneOf, str } from "../command.ts";
import { type Column, clean, dim, fields, json, note, out, status, table, time } from "../output.ts";
import { showEndpoint } from "./endpoints.ts";

/** The list and show commands of each resource, with the API's filters as flags. */

const LIST_OPTIONS = { limit: { type: "string" }, all: { type: "boolean" } } as const;
const LIST_HELP = `  --limit N          at most N (default 20)
  --all              every one, page after page`;

/** Prints up to --limit items (or --all), newest first, and says when more are left. */
async function listing<T>(
  ctx: Context,
  list: (pageSize: number) => PageIterator<T, { limit?: number }>,
  columns: Column<T>[],
  what: string,
): Promise<number> {
  const limit = ctx.values.all ? Number.POSITIVE_INFINITY : int(ctx.values, "limit", 20);
  const items = await list(Math.min(100, limit + 1)).toArray({ max: limit + 1 });
  const more = items.length > limit;
  if (more) items.pop();
  if (ctx.json) out(json(items));
  else if (items.length === 0) note(dim(`No ${what}.`));
  else out(table(items, columns));
  if (more && !ctx.json) note(dim(`More ${what} than shown: --limit N, or --all.`));
  return 0;
}

/** `<noun> show <id>`: the object's fields, or its JSON. */
function simpleShow(
  name: string,
  arg: string,
  summary: string,
  retrieve: (herald: Herald, id: string) => Promise<object>,
): Command {
  return {
    name,
    usage: `${name} ${arg}`,
    summary,
    positionals: [1, 1],
    async run(ctx) {
      const object = await retrieve(ctx.herald(), ctx.positionals[0]!);
      out(ctx.json ? json(object) : fields(object as Record<string, unknown>));
      return 0;
    },
  };
}

const appColumns: Column<App>[] = [
  { header: "ID", value: (a) => a.id },
  { header: "UID", value: (a) => a.uid },
  { header: "NAME", value: (a) => a.name, max: 40 },
  { header: "CREATED", value: (a) => time(a.created_at) },
];

const endpointColumns: Column<Endpoint>[] = [
  { header: "ID", value: (e) => e.id },
  { header: "APP", value: (e) => e.app },
  { header: "URL", value: (e) => e.url, max: 50 },
  { header: "STATE", value: (e) => status(e.delivery_state.state) },
  { header: "EVENT TYPES", value: (e) => (e.event_types.length ? e.event_types.join(",") : "all"), max: 40 },
];

const eventTypeColumns: Column<EventType>[] = [
  { header: "NAME", value: (t) => t.name },
  { header: "ARCHIVED", value: (t) => (t.archived ? "yes" : "") },
  { header: "SCHEMA", value: (t) => (t.schema ? "yes" : "") },
  { header: "DESCRIPTION", value: (t) => t.description, max: 50 },
];

/** `2 succeeded, 1 failed` */
function deliveriesSummary(e: Event): string {
  const counts = new Map<string, number>();
  for (const d of e.deliveries) counts.set(d.status, (counts.get(d.status) ?? 0) + 1);
  const text = [...counts].map(([s, n]) => `${n} ${status(s)}`).join(", ");
  return e.deliveries_has_more ? `${text}, …` : text || "none yet";
}

const eventColumns: Column<Event>[] = [
  { header: "ID", value: (e) => e.id },
  { header: "APP", value: (e) => e.app },
  { header: "TYPE", value: (e) => e.type },
  { header: "DELIVERIES", value: deliveriesSummary, max: 80 },
  { header: "CREATED", value: (e) => time(e.created_at) },
];

/** `200`, or why it failed: `timeout`, `http_error 500`. */
export function outcome(a: Pick<Attempt, "status" | "response_status" | "error">): string {
  if (a.status === "pending") return "-";
  if (a.error) return a.response_status ? `${a.error} ${a.response_status}` : a.error;
  return String(a.response_status ?? "-");
}

export const attemptColumns: Column<Attempt>[] = [
  { header: "ID", value: (a) => a.id },
  { header: "STATUS", value: (a) => status(a.status) },
  { header: "RESPONSE", value: outcome },
  { header: "MS", value: (a) => a.duration_ms },
  { header: "#", value: (a) => a.attempt_number },
  { header: "EVENT", value: (a) => a.event },
  { header: "ENDPOINT", value: (a) => a.endpoint },
  { header: "AT", value: (a) => time(a.completed_at ?? a.scheduled_at) },
];

const EVENT_STATUSES = ["pending", "succeeded", "retrying", "failed", "dropped", "cancelled"] as const;
const ATTEMPT_STATUSES = ["pending", "succeeded", "failed", "cancelled"] as const;

export const resourceCommands: Command[] = [
  {
    name: "apps list",
    usage: "apps list [--limit N | --all]",
    summary: "Lists your apps (one per customer), newest first.",
    help: LIST_HELP,
    options: LIST_OPTIONS,
    run: (ctx) => listing(ctx, (limit) => ctx.herald().apps.list({ limit }), appColumns, "apps"),
  },
  simpleShow("apps show", "<app>", "Shows an app, by id or uid.", (h, id) => h.apps.retrieve(id)),
  {
    name: "endpoints list",
    usage: "endpoints list [--app APP] [--limit N | --all]",
    summary: "Lists endpoints, all apps' or one app's, newest first.",
    help: `  --app APP          one app's (id or uid)\n${LIST_HELP}`,
    options: { ...LIST_OPTIONS, app: { type: "string" } },
    run: (ctx) =>
      listing(
        ctx,
        (limit) => ctx.herald().endpoints.list({ limit, app: str(ctx.values, "app") }),
        endpointColumns,
        "endpoints",
      ),
  },
  {
    name: "endpoints show",
    usage: "endpoints show <endpoint>",
    summary: "Shows an endpoint, with how deliveries to it go now and its health over 24 hours.",
    positionals: [1, 1],
    async run(ctx) {
      const id = ctx.positionals[0]!;
      const [endpoint, health] = await Promise.all([
        ctx.herald().endpoints.retrieve(id),
        ctx.herald().endpoints.health(id),
      ]);
      if (ctx.json) out(json({ ...endpoint, health }));
      else out(showEndpoint(endpoint, `${dim("health (24 h)")}  ${JSON.stringify(health)}`));
      return 0;
    },
  },
  {
    name: "event-types list",
    usage: "event-types list [--include-archived] [--limit N | --all]",
    summary: "Lists event types by name.",
    help: `  --include-archived archived ones too\n${LIST_HELP}`,
    options: { ...LIST_OPTIONS, "include-archived": { type: "boolean" } },
    run: (ctx) =>
      listing(
        ctx,
        (limit) =>
          ctx.herald().eventTypes.list({ limit, include_archived: ctx.values["include-archived"] === true }),
        eventTypeColumns,
        "event types",
      ),
  },
  simpleShow(
    "event-types show",
    "<name>",
    "Shows an event type, with its schema and an example payload.",
    (h, id) => h.eventTypes.retrieve(id),
  ),
  {
    name: "events list",
    usage: "events list [--app APP] [--type TYPE] [--status STATUS] [--endpoint EP] [--limit N | --all]",
    summary: "Lists events, newest first, with how their deliveries stand.",
    help: `  --app APP          one app's (id or uid)
  --type TYPE        of this event type
  --status STATUS    with a delivery in this status: ${EVENT_STATUSES.join(", ")}
  --endpoint EP      with a delivery to this endpoint
${LIST_HELP}`,
    options: {
      ...LIST_OPTIONS,
      app: { type: "string" },
      type: { type: "string" },
      status: { type: "string" },
      endpoint: { type: "string" },
    },
    run: (ctx) =>
      listing(
        ctx,
        (limit) =>
          ctx.herald().events.list({
            limit,
            app: str(ctx.values, "app"),
            type: str(ctx.values, "type"),
            status: oneOf(ctx.values, "status", EVENT_STATUSES),
            endpoint: str(ctx.values, "endpoint"),
          }),
        eventColumns,
        "events",
      ),
  },
  {
    name: "events show",
    usage: "events show <event>",
    summary: "Shows an event, its payload and its deliveries.",
    positionals: [1, 1],
    async run(ctx) {
      const event = await ctx.herald().events.retrieve(ctx.positionals[0]!);
      if (ctx.json) return void out(json(event));
      out(fields(event, ["deliveries", "deliveries_has_more", "data"]));
      out(`${dim("data")}\n${clean(json(event.data))}`);
      if (event.deliveries.length)
        out(
          `${dim("deliveries")}\n${table(event.deliveries, [
            { header: "ENDPOINT", value: (d) => d.endpoint },
            { header: "STATUS", value: (d) => status(d.status) },
            { header: "ATTEMPTS", value: (d) => d.attempts },
          ])}`,
        );
      if (event.deliveries_has_more) note(dim("More deliveries than shown (the API's first 100)."));
      return 0;
    },
  },
  {
    name: "attempts list",
    usage: "attempts list [--endpoint EP] [--event EVT] [--status STATUS] [--app APP] [--limit N | --all]",
    summary: "Lists delivery attempts, newest first.",
    help: `  --endpoint EP      to this endpoint
  --event EVT        of this event
  --status STATUS    ${ATTEMPT_STATUSES.join(", ")}
  --app APP          one app's (id or uid)
${LIST_HELP}`,
    options: {
      ...LIST_OPTIONS,
      endpoint: { type: "string" },
      event: { type: "string" },
      status: { type: "string" },
      app: { type: "string" },
    },
    run: (ctx) =>
      listing(
        ctx,
        (limit) =>
          ctx.herald().attempts.list({
            limit,
            endpoint: str(ctx.values, "endpoint"),
            event: str(ctx.values, "event"),
            status: oneOf(ctx.values, "status", ATTEMPT_STATUSES),
            app: str(ctx.values, "app"),
          }),
        attemptColumns,
        "attempts",
      ),
  },
  simpleShow(
    "attempts show",
    "<attempt>",
    "Shows an attempt: the request as sent and the response.",
    (h, id) => h.attempts.retrieve(id),
  ),
  simpleShow("replays show", "<replay>", "Shows a replay's progress.", (h, id) => h.replays.retrieve(id)),
];
