import type { Schema } from "../../http/route.ts";
import { iso, timestamp } from "../common.ts";
import { authShownSchemas, shownAuth } from "./auth.ts";
import { shownHeaders } from "./headers.ts";
import { filterField } from "./input.ts";
import type { HeldBehind } from "./order.ts";
import { deliveryState, deliveryStateSchema, type FlowRow, limitFields } from "./state.ts";
import { transformationField } from "./transformation.ts";

/** The endpoint object: how a row is shown (`serializeEndpoint`) and its schema in the API reference. */
export type EndpointRow = {
  id: string;
  appId: string;
  url: string;
  description: string;
  eventTypes: string[];
  headers: unknown;
  disabled: boolean;
  disabledReason: string | null;
  rateLimit: number | null;
  maxInFlight: number | null;
  ordering: string;
  filter: unknown;
  transformation: string | null;
  /** What is shown of its authentication (auth.ts); null: none. */
  auth: unknown;
  flow?: FlowRow | null;
  createdAt: Date;
  updatedAt: Date;
};

/** `held`: a fifo endpoint's head, when the caller read it (order.ts). */
export const serializeEndpoint = (e: EndpointRow, held: HeldBehind | null = null) => ({
  id: e.id,
  object: "endpoint" as const,
  app: e.appId,
  url: e.url,
  description: e.description,
  event_types: e.eventTypes,
  disabled: e.disabled,
  disabled_reason: e.disabledReason,
  // Write-only: the names, never the values (headers.ts).
  headers: shownHeaders(e.headers),
  rate_limit: e.rateLimit,
  max_in_flight: e.maxInFlight,
  ordering: e.ordering,
  filter: e.filter ?? null,
  transformation: e.transformation,
  ...shownAuth(e.auth),
  delivery_state: deliveryState(e, new Date(), held),
  created_at: iso(e.createdAt),
  updated_at: iso(e.updatedAt),
});

export const endpointSchemas: Record<string, Schema> = {
  Endpoint: {
    type: "object",
    required: [
      "id",
      "object",
      "app",
      "url",
      "description",
      "event_types",
      "disabled",
      "disabled_reason",
      "headers",
      "rate_limit",
      "max_in_flight",
      "ordering",
      "filter",
      "transformation",
      "tls",
      "oauth2",
      "delivery_state",
      "created_at",
      "updated_at",
    ],
    properties: {
      id: { type: "string", examples: ["ep_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "endpoint" },
      app: { type: "string", description: "The app's id." },
      url: { type: "string" },
      description: { type: "string" },
      event_types: { type: "array", items: { type: "string" } },
      disabled: { type: "boolean" },
      disabled_reason: { type: ["string", "null"] },
      headers: {
        type: "object",
        additionalProperties: { type: "string", const: "[redacted]" },
        description: "The custom headers' names; each value is `[redacted]`: they are write-only.",
      },
      ...limitFields,
      filter: filterField,
      transformation: transformationField,
      ...authShownSchemas,
      delivery_state: deliveryStateSchema,
      created_at: timestamp,
      updated_at: timestamp,
    },
  },
};
