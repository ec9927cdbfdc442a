import { Transport } from "./client.ts";
import type { HeraldOptions } from "./options.ts";
import { ApiKeys } from "./resources/apiKeys.ts";
import { Apps } from "./resources/apps.ts";
import { Attempts } from "./resources/attempts.ts";
import { AuditLog } from "./resources/auditLog.ts";
import { Endpoints } from "./resources/endpoints.ts";
import { Events } from "./resources/events.ts";
import { EventTypes } from "./resources/eventTypes.ts";
import { OperationalWebhooks } from "./resources/operationalWebhooks.ts";
import { Replays } from "./resources/replays.ts";
import { DashboardSessions, PortalSessions } from "./resources/sessions.ts";

/**
 * A client of Herald's API: `new Herald({ apiKey, baseUrl })`, or `new Herald()` with
 * HERALD_API_KEY and HERALD_URL set. One method per operation, grouped by resource.
 */
export class Herald {
  readonly apps: Apps;
  readonly eventTypes: EventTypes;
  readonly endpoints: Endpoints;
  readonly events: Events;
  readonly attempts: Attempts;
  readonly replays: Replays;
  readonly operationalWebhooks: OperationalWebhooks;
  readonly apiKeys: ApiKeys;
  readonly portalSessions: PortalSessions;
  readonly dashboardSessions: DashboardSessions;
  readonly auditLog: AuditLog;
  /** The gateway this client calls, without a trailing slash. */
  readonly baseUrl: string;

  constructor(options: HeraldOptions = {}) {
    const transport = new Transport(options);
    this.baseUrl = transport.baseUrl;
    this.apps = new Apps(transport);
    this.eventTypes = new EventTypes(transport);
    this.endpoints = new Endpoints(transport);
    this.events = new Events(transport);
    this.attempts = new Attempts(transport);
    this.replays = new Replays(transport);
    this.operationalWebhooks = new OperationalWebhooks(transport);
    this.apiKeys = new ApiKeys(transport);
    this.portalSessions = new PortalSessions(transport);
    this.dashboardSessions = new DashboardSessions(transport);
    this.auditLog = new AuditLog(transport);
  }
}
