import type { RouteSpec, Schema } from "./http/route.ts";
import { listenRoutes } from "./listen/route.ts";
import { adminRoutes, adminSchemas } from "./resources/admin.ts";
import { apiKeyRoutes, apiKeySchemas } from "./resources/apiKeys.ts";
import { appRoutes, appSchemas } from "./resources/apps.ts";
import { attemptRoutes, attemptSchemas } from "./resources/attempts.ts";
import { dashboardSessionRoutes, dashboardSessionSchemas } from "./resources/dashboardSessions.ts";
import { dryRunRoutes, dryRunSchemas } from "./resources/dryRun.ts";
import { endpointHealthRoutes, endpointHealthSchemas } from "./resources/endpointHealth.ts";
import { endpointSchemas } from "./resources/endpointObject.ts";
import { endpointSecretRoutes, endpointSecretSchemas } from "./resources/endpointSecret.ts";
import { endpointRoutes } from "./resources/endpoints.ts";
import { eventDeliveryRoutes } from "./resources/eventDeliveries.ts";
import { eventErasureRoutes } from "./resources/eventErasure.ts";
import { eventRoutes, eventSchemas } from "./resources/events.ts";
import { eventTypeRoutes, eventTypeSchemas } from "./resources/eventTypes.ts";
import { jsonSchemaRoutes, jsonSchemaSchemas } from "./resources/jsonSchema.ts";
import { operationalRoutes, operationalSchemas } from "./resources/operational.ts";
import { replayRoutes, replaySchemas } from "./resources/replays.ts";
import { sessionRoutes, sessionSchemas } from "./resources/sessions.ts";
import { statsRoutes, statsSchemas } from "./resources/stats.ts";
import { testEventRoutes } from "./resources/testEvent.ts";

/** Every route the gateway serves under /v3, /admin and /session: registered on Express and documented from here. */
export const routes: RouteSpec[] = [
  ...appRoutes,
  ...eventTypeRoutes,
  ...jsonSchemaRoutes,
  ...endpointRoutes,
  ...endpointSecretRoutes,
  ...replayRoutes,
  ...listenRoutes,
  ...testEventRoutes,
  ...statsRoutes,
  ...endpointHealthRoutes,
  ...dryRunRoutes,
  ...eventRoutes,
  ...eventErasureRoutes,
  ...eventDeliveryRoutes,
  ...attemptRoutes,
  ...operationalRoutes,
  ...apiKeyRoutes,
  ...sessionRoutes,
  ...dashboardSessionRoutes,
  ...adminRoutes,
];

export const componentSchemas: Record<string, Schema> = {
  ...appSchemas,
  ...eventTypeSchemas,
  ...jsonSchemaSchemas,
  ...endpointSchemas,
  ...endpointSecretSchemas,
  ...replaySchemas,
  ...eventSchemas,
  ...dryRunSchemas,
  ...attemptSchemas,
  ...operationalSchemas,
  ...apiKeySchemas,
  ...sessionSchemas,
  ...dashboardSessionSchemas,
  ...statsSchemas,
  ...endpointHealthSchemas,
  ...adminSchemas,
};
