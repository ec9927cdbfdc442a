import type { RouteSpec, Schema } from "./http/route.ts";
import { adminRoutes, adminSchemas } from "./resources/admin.ts";
import { apiKeyRoutes, apiKeySchemas } from "./resources/apiKeys.ts";
import { appRoutes, appSchemas } from "./resources/apps.ts";
import { attemptRoutes, attemptSchemas } from "./resources/attempts.ts";
import { endpointRoutes, endpointSchemas } from "./resources/endpoints.ts";
import { eventRoutes, eventSchemas } from "./resources/events.ts";
import { eventTypeRoutes, eventTypeSchemas } from "./resources/eventTypes.ts";
import { replayRoutes, replaySchemas } from "./resources/replays.ts";
import { sessionRoutes, sessionSchemas } from "./resources/sessions.ts";
import { statsRoutes, statsSchemas } from "./resources/stats.ts";
import { testEventRoutes } from "./resources/testEvent.ts";

/** Every route the gateway serves under /v3, /admin and /session: registered on Express and documented from here. */
export const routes: RouteSpec[] = [
  ...appRoutes,
  ...eventTypeRoutes,
  ...endpointRoutes,
  ...replayRoutes,
  ...testEventRoutes,
  ...statsRoutes,
  ...eventRoutes,
  ...attemptRoutes,
  ...apiKeyRoutes,
  ...sessionRoutes,
  ...adminRoutes,
];

export const componentSchemas: Record<string, Schema> = {
  ...appSchemas,
  ...eventTypeSchemas,
  ...endpointSchemas,
  ...replaySchemas,
  ...eventSchemas,
  ...attemptSchemas,
  ...apiKeySchemas,
  ...sessionSchemas,
  ...statsSchemas,
  ...adminSchemas,
};
