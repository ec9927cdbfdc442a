import type { OperationId } from "./generated/openapi.ts";

/**
 * Operations of the API the SDK deliberately has no method for, and why. Everything else must
 * have one: `sdkMethods` below fails to compile when a generated operation is neither there nor
 * here, and test/sdk/generated.test.ts checks the same against the document the gateway builds.
 */
export const uncoveredOperations = {
  // Browser sessions: a portal or dashboard link opened in a browser becomes a cookie session.
  // Only the gateway's own pages call these; an API key cannot.
  openSession: "browser session: the portal's and dashboard's pages, with a cookie",
  browserSession: "browser session: the portal's and dashboard's pages, with a cookie",
  endBrowserSession: "browser session: the portal's and dashboard's pages, with a cookie",
  // A WebSocket, not a request and its response: Node 20 has no WebSocket client built in, and the
  // SDK takes no dependency for one. The CLI's `herald listen` opens it.
  listenForDeliveriesOverWebsocket: "WebSocket (herald listen), not an HTTP request and response",
  // The operator's routes take ADMIN_TOKEN, not an account's API key: installation tooling.
  createAccount: "operator route (/admin, ADMIN_TOKEN)",
  listAccounts: "operator route (/admin, ADMIN_TOKEN)",
  retrieveAccount: "operator route (/admin, ADMIN_TOKEN)",
  updateAccount: "operator route (/admin, ADMIN_TOKEN)",
} as const satisfies Partial<Record<OperationId, string>>;

export type CoveredOperationId = Exclude<OperationId, keyof typeof uncoveredOperations>;

/** The method of `Herald` for each operation: `resource.method`. */
export const sdkMethods = {
  createApp: "apps.create",
  listApps: "apps.list",
  retrieveApp: "apps.retrieve",
  updateApp: "apps.update",
  deleteApp: "apps.delete",
  createEventType: "eventTypes.create",
  listEventTypes: "eventTypes.list",
  retrieveEventType: "eventTypes.retrieve",
  updateEventType: "eventTypes.update",
  deleteArchiveEventType: "eventTypes.delete",
  archiveEventType: "eventTypes.archive",
  unarchiveEventType: "eventTypes.unarchive",
  validateJsonSchema: "eventTypes.validateSchema",
  createEndpoint: "endpoints.create",
  listEndpoints: "endpoints.list",
  retrieveEndpoint: "endpoints.retrieve",
  updateEndpoint: "endpoints.update",
  deleteEndpoint: "endpoints.delete",
  retrieveEndpointSigningSecret: "endpoints.retrieveSecret",
  rotateEndpointSigningSecret: "endpoints.rotateSecret",
  replayFailedDeliveries: "endpoints.replay",
  previewReplay: "endpoints.previewReplay",
  sendTestEventToEndpoint: "endpoints.sendTestEvent",
  testEndpointTransformation: "endpoints.testTransformation",
  testUnsavedTransformation: "endpoints.testUnsavedTransformation",
  endpointHealth: "endpoints.health",
  endpointsHealthFailingFirst: "endpoints.listHealth",
  retrieveReplay: "replays.retrieve",
  sendEvent: "events.send",
  dryRunEvent: "events.dryRun",
  listEvents: "events.list",
  retrieveEvent: "events.retrieve",
  eraseEventPayload: "events.erasePayload",
  listEventDeliveries: "events.listDeliveries",
  listAttempts: "attempts.list",
  retrieveAttempt: "attempts.retrieve",
  attemptStatistics: "attempts.stats",
  createOperationalEndpoint: "operationalWebhooks.createEndpoint",
  listOperationalEndpoints: "operationalWebhooks.listEndpoints",
  listOperationalEventTypes: "operationalWebhooks.listEventTypes",
  createApiKey: "apiKeys.create",
  listApiKeys: "apiKeys.list",
  revokeApiKey: "apiKeys.revoke",
  createPortalSession: "portalSessions.create",
  revokeAppPortalSessions: "portalSessions.revokeAll",
  createDashboardSession: "dashboardSessions.create",
  listDashboardSessions: "dashboardSessions.list",
  revokeDashboardSession: "dashboardSessions.revoke",
  listAuditLog: "auditLog.list",
} as const satisfies Record<CoveredOperationId, string>;
