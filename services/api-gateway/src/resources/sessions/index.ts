/**
 * Sessions: portal and dashboard links made in crud.ts; opened, read and ended by the browser
 * (`/session`) in browser.ts; the account's dashboard sessions listed and revoked in dashboard.ts.
 */
export { browserSessionRoutes, browserSessionSchemas } from "./browser.ts";
export { sessionRoutes, sessionSchemas } from "./crud.ts";
export { dashboardSessionRoutes, dashboardSessionSchemas } from "./dashboard.ts";
