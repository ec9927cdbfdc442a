/**
 * Endpoints (`/v3/endpoints`): made, listed, read, changed and deleted in crud.ts; their signing
 * secret in secret.ts, their health in health.ts, a test event in testEvent.ts, their
 * transformation in transformation.ts and its try-it in transformationTest.ts (replays have
 * their own folder). What those routes share: the endpoint object (object.ts), inputs checked
 * beyond their schema (input.ts), authentication (auth.ts, tlsMaterial.ts), sealed headers
 * (headers.ts), and how deliveries to it go now (state.ts, order.ts).
 */
export { endpointRoutes } from "./crud.ts";
export { endpointHealthRoutes, endpointHealthSchemas } from "./health.ts";
export { endpointSchemas } from "./object.ts";
export { endpointSecretRoutes, endpointSecretSchemas } from "./secret.ts";
export { testEventRoutes } from "./testEvent.ts";
export { transformationTestRoutes, transformationTestSchemas } from "./transformationTest.ts";
