import { Budget, endpointTakes, storedFilter } from "@herald/contracts/filter";
import type { Ctx } from "../../context.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { checkAppReach, resolveAppCached } from "../common.ts";
import { checkEvent, type SendBody, sendBodySchema, storedData } from "./send.ts";

/**
 * `POST /v3/events/dry-run`: which endpoints an event would reach, and why each other one
 * would not, without storing or sending anything. Checked as `POST /v3/events` checks it (the
 * type, its schema), then matched as the dispatcher's fan-out matches (@herald/contracts/filter).
 */
const REASONS = {
  yes: null,
  unchecked:
    "Its filter would cost too much to check on this event: it is not applied, and the endpoint receives it.",
  event_types: "Its event_types do not list the event's type.",
  filter: "Its filter does not match the event.",
  disabled: "It is disabled.",
} as const;

export const dryRunSchemas: Record<string, Schema> = {
  EventDryRun: {
    type: "object",
    required: ["object", "app", "type", "endpoints"],
    properties: {
      object: { const: "event_dry_run" },
      app: { type: "string", description: "The app's id." },
      type: { type: "string" },
      endpoints: {
        type: "array",
        description: "Every endpoint of the app, oldest first.",
        items: {
          type: "object",
          required: ["endpoint", "url", "receives", "reason", "why"],
          properties: {
            endpoint: { type: "string" },
            url: { type: "string" },
            receives: { type: "boolean" },
            reason: {
              enum: [null, "unchecked", "event_types", "filter", "disabled"],
              description:
                "Why not (or, for `unchecked`, why it receives it although it has a filter): the filter was over the work one event may cost, and is not applied.",
            },
            why: { type: ["string", "null"], description: "The reason, in words." },
          },
        },
      },
    },
  },
};

export const dryRunRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/events/dry-run",
    auth: "account",
    scope: "events:read",
    audit: false,
    portal: "read",
    tag: "Events",
    summary: "Dry-run an event",
    description:
      "Which endpoints of the app an event would reach, and why each other one would not (its `event_types`, its `filter`, disabled), checked as `POST /v3/events` checks it (a `422` when the type's schema refuses `data`). Nothing is stored or sent.",
    body: sendBodySchema,
    formJson: ["data"],
    response: { status: 200, schema: ref("EventDryRun"), description: "Where the event would go." },
    async handler({ account, body, deps }: Ctx<object, object, SendBody>) {
      const app = await resolveAppCached(deps, account.id, body.app, "app");
      checkAppReach(account, app.id, "app", body.app, "app");
      await checkEvent(deps, account, body.type, body.data);
      storedData(body.data);
      const endpoints = await deps.prisma.endpoint.findMany({
        where: { appId: app.id, deletedAt: null },
        orderBy: { id: "asc" },
        select: { id: true, url: true, eventTypes: true, filter: true, disabled: true },
      });
      const event = { id: "evt_dry_run", type: body.type, app: app.id, data: body.data };
      const budget = new Budget();
      return {
        body: {
          object: "event_dry_run" as const,
          app: app.id,
          type: body.type,
          endpoints: endpoints.map((e) => {
            const reason = e.disabled
              ? "disabled"
              : endpointTakes(e.eventTypes, storedFilter(e.filter), event, budget);
            return {
              endpoint: e.id,
              url: e.url,
              receives: reason === "yes" || reason === "unchecked",
              reason: reason === "yes" ? null : reason,
              why: REASONS[reason],
            };
          }),
        },
      };
    },
  },
];
