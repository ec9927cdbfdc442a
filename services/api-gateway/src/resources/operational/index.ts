/**
 * Operational webhooks (`/v3/operational-endpoints`, `/v3/operational-event-types`): the routes
 * in crud.ts; the event types' catalog, also the OpenAPI document's `webhooks`, in catalog.ts;
 * what the gateway itself tells operational endpoints in notices.ts.
 */
export { operationalRoutes, operationalSchemas } from "./crud.ts";
