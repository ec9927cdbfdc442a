/**
 * Events (`/v3/events`): `POST /v3/events` is declared in crud.ts beside the list and the read,
 * and done by send.ts, which the dry run (dryRun.ts) and endpoints' test events share; an
 * event's deliveries in deliveries.ts, erasing its payload in erasure.ts.
 */
export { eventRoutes, eventSchemas } from "./crud.ts";
export { eventDeliveryRoutes } from "./deliveries.ts";
export { dryRunRoutes, dryRunSchemas } from "./dryRun.ts";
export { eventErasureRoutes } from "./erasure.ts";
