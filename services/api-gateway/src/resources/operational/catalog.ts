import type { OperationalType } from "@herald/db/lifecycle";
import type { Schema } from "../../http/route.ts";
import { nullableTimestamp, timestamp } from "../common.ts";

/**
 * The operational event types: what each means and its `data`'s JSON Schema. Served at
 * GET /v3/operational-event-types and in the OpenAPI document's `webhooks`; the lifecycle's
 * operational.ts writes the events.
 */
const about: Record<string, Schema> = {
  endpoint: { type: "string", description: "The endpoint's id." },
  app: { type: "string", description: "Its app's id." },
  app_uid: { type: ["string", "null"], description: "Its app's uid, if it has one." },
  url: { type: "string", description: "The endpoint's URL." },
};

const data = (required: string[], properties: Record<string, Schema>): Schema => ({
  type: "object",
  required: [...Object.keys(about), ...required],
  properties: { ...about, ...properties },
});

export const OPERATIONAL_CATALOG: Record<OperationalType, { description: string; schema: Schema }> = {
  "endpoint.disabled": {
    description:
      "An endpoint was disabled: automatically (it answered 410 Gone, or every attempt failed for ENDPOINT_DISABLE_AFTER) or through the API. Nothing is sent to it until it is enabled; its open deliveries end `failed`.",
    schema: data(["trigger", "reason", "disabled_at"], {
      trigger: { enum: ["automatic", "manual"], description: "`manual`: through the API or the portal." },
      reason: { type: "string", description: "Why, in words (the endpoint's `disabled_reason`)." },
      disabled_at: timestamp,
    }),
  },
  "endpoint.paused": {
    description:
      "An endpoint stopped answering (attempts in a row timed out or could not connect) and its deliveries are held, not failed. One test delivery (the probe) goes at `next_probe_at`; told once a pause, not again for each failed probe.",
    schema: data(["reason", "paused_at", "next_probe_at"], {
      reason: { const: "not_responding" },
      paused_at: timestamp,
      next_probe_at: nullableTimestamp,
    }),
  },
  "endpoint.recovered": {
    description:
      "An endpoint is sent to again: a paused one answered (`trigger: automatic`), or, through the API or the portal (`manual`), a disabled one was enabled, or a paused one was given a new URL. Its held deliveries go out now. Told once for each pause or disable that ended; not while the endpoint stays disabled.",
    schema: data(["trigger", "reason", "recovered_at"], {
      trigger: {
        enum: ["automatic", "manual"],
        description:
          "`automatic`: it answered again. `manual`: enabled, or given a new URL while paused, through the API or the portal.",
      },
      reason: { type: "string", description: "What ended it, in words." },
      recovered_at: timestamp,
    }),
  },
  "delivery.exhausted": {
    description:
      "A delivery ran out of retries: its last attempt failed and the schedule has no step left, so it ended `failed`. Replay it with POST /v3/endpoints/{id}/replay.",
    schema: data(["event", "event_type", "delivery", "attempts", "last_attempt", "failed_at"], {
      event: { type: "string", description: "The event's id." },
      event_type: { type: ["string", "null"] },
      delivery: { type: "string", description: "The delivery's id." },
      attempts: { type: "integer", description: "The number of its last attempt." },
      last_attempt: {
        type: "object",
        required: ["id", "response_status", "error"],
        properties: {
          id: { type: "string" },
          response_status: { type: ["integer", "null"] },
          error: { type: ["string", "null"] },
        },
      },
      failed_at: timestamp,
    }),
  },
  "replay.completed": {
    description:
      "A replay handed every delivery it queued to a sender again (or had none to queue). Their results follow: GET /v3/replays/{id}.",
    schema: data(["replay", "queued", "completed_at"], {
      replay: { type: "string", description: "The replay's id." },
      queued: { type: "integer" },
      completed_at: timestamp,
    }),
  },
};

/** `endpoint.disabled` → `endpointDisabledWebhook`: the webhook's name in generated code. */
const operationId = (name: string) =>
  `${name.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Webhook`;

/**
 * Each type as a webhook of the OpenAPI document: the body its endpoints receive, signed as
 * every delivery is (the document's `webhookSignature` scheme).
 */
export function operationalWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(OPERATIONAL_CATALOG).map(([name, t]) => [
      name,
      {
        post: {
          operationId: operationId(name),
          summary: name,
          description: t.description,
          tags: ["Operational webhooks"],
          security: [{ webhookSignature: [] }],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["type", "timestamp", "data"],
                  properties: { type: { const: name }, timestamp, data: t.schema },
                },
              },
            },
          },
          responses: { "200": { description: "Any 2xx within the timeout is success." } },
        },
      },
    ]),
  );
}
