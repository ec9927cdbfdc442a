import type { Body, Item, Query, Result, Transport } from "../client.ts";
import type { DashboardSession, PortalSession } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** Customer portal links (`/v3/apps/{app}/portal-sessions`): one app's portal, for a limited time. */
export class PortalSessions {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/apps/{app}/portal-sessions`: a link that opens the app's portal. */
  create(
    app: string,
    params: Body<"createPortalSession"> = {},
    options?: RequestOptions,
  ): Promise<PortalSession> {
    return this.transport.call("createPortalSession", { params: { app }, body: params }, options);
  }

  /** `DELETE /v3/apps/{app}/portal-sessions`: ends every portal link of the app. */
  revokeAll(app: string, options?: RequestOptions): Promise<Result<"revokeAppPortalSessions">> {
    return this.transport.call("revokeAppPortalSessions", { params: { app } }, options);
  }
}

/** Dashboard links (`/v3/dashboard-sessions`): the account's dashboard, for a limited time. */
export class DashboardSessions {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/dashboard-sessions` */
  create(params: Body<"createDashboardSession"> = {}, options?: RequestOptions): Promise<DashboardSession> {
    return this.transport.call("createDashboardSession", { body: params }, options);
  }

  /** `GET /v3/dashboard-sessions` */
  list(
    query: Query<"listDashboardSessions"> = {},
    options?: RequestOptions,
  ): PageIterator<Item<"listDashboardSessions">, Query<"listDashboardSessions">> {
    return this.transport.list("listDashboardSessions", undefined, query, options);
  }

  /** `DELETE /v3/dashboard-sessions/{id}` */
  revoke(id: string, options?: RequestOptions): Promise<Result<"revokeDashboardSession">> {
    return this.transport.call("revokeDashboardSession", { params: { id } }, options);
  }
}
