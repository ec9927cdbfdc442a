/**
 * Event types (`/v3/event-types`): made, listed, read, changed and archived in crud.ts; their
 * JSON Schemas checked on the schema workers by schemaCheck.ts, the check
 * `POST /v3/json-schema/validate` (jsonSchema.ts) offers on its own.
 */
export { eventTypeRoutes, eventTypeSchemas } from "./crud.ts";
export { jsonSchemaRoutes, jsonSchemaSchemas } from "./jsonSchema.ts";
