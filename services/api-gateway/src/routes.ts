import { auditRoutes, auditSchemas } from "./audit/routes.ts";
import type { RouteSpec, Schema } from "./http/route.ts";
import { listenRoutes } from "./listen/route.ts";
import { adminRoutes, adminSchemas } from "./resources/admin/index.ts";
import { apiKeyRoutes, apiKeySchemas } from "./resources/apiKeys/index.ts";
import { appRoutes, appSchemas } from "./resources/apps/index.ts";
import { attemptRoutes, attemptSchemas } from "./resources/attempts/index.ts";
import {
  endpointHealthRoutes,
  endpointHealthSchemas,
  endpointRoutes,
  endpointSchemas,
  endpointSecretRoutes,
  endpointSecretSchemas,
  testEventRoutes,
  transformationTestRoutes,
  transformationTestSchemas,
} from "./resources/endpoints/index.ts";
import {
  dryRunRoutes,
  dryRunSchemas,
  eventDeliveryRoutes,
  eventErasureRoutes,
  eventRoutes,
  eventSchemas,
} from "./resources/events/index.ts";
import {
  eventTypeRoutes,
  eventTypeSchemas,
  jsonSchemaRoutes,
  jsonSchemaSchemas,
} from "./resources/eventTypes/index.ts";
import { operationalRoutes, operationalSchemas } from "./resources/operational/index.ts";
import { replayRoutes, replaySchemas } from "./resources/replays/index.ts";
import {
  browserSessionRoutes,
  browserSessionSchemas,
  dashboardSessionRoutes,
  dashboardSessionSchemas,
  sessionRoutes,
  sessionSchemas,
} from "./resources/sessions/index.ts";
import { statsRoutes, statsSchemas } from "./resources/stats/index.ts";

/** Every route the gateway serves under /v3, /admin and /session: registered on Express and documented from here. */
export const routes: RouteSpec[] = [
  ...appRoutes,
  ...eventTypeRoutes,
  ...jsonSchemaRoutes,
  ...endpointRoutes,
  ...endpointSecretRoutes,
  ...replayRoutes,
  ...listenRoutes,
  // Before the test event's /v3/endpoints/{id}/test, which would take `transformation` for an id.
  ...transformationTestRoutes,
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
  ...browserSessionRoutes,
  ...dashboardSessionRoutes,
  ...auditRoutes,
  ...adminRoutes,
];

export const componentSchemas: Record<string, Schema> = {
  ...appSchemas,
  ...eventTypeSchemas,
  ...jsonSchemaSchemas,
  ...endpointSchemas,
  ...endpointSecretSchemas,
  ...transformationTestSchemas,
  ...replaySchemas,
  ...eventSchemas,
  ...dryRunSchemas,
  ...attemptSchemas,
  ...operationalSchemas,
  ...apiKeySchemas,
  ...sessionSchemas,
  ...browserSessionSchemas,
  ...dashboardSessionSchemas,
  ...statsSchemas,
  ...endpointHealthSchemas,
  ...auditSchemas,
  ...adminSchemas,
};
