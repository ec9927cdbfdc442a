/**
 * Sessions: portal and dashboard links made, and opened by the browser (`/session`), in crud.ts;
 * the account's dashboard sessions listed and revoked in dashboard.ts.
 */
export { sessionRoutes, sessionSchemas } from "./crud.ts";
export { dashboardSessionRoutes, dashboardSessionSchemas } from "./dashboard.ts";
