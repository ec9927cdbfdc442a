import type { Body, Item, Query, Transport } from "../client.ts";
import type { Endpoint } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { Page, PageIterator } from "../paging.ts";

/**
 * Operational webhooks: Herald's own notices to you about your account (an endpoint failing, say),
 * delivered to operational endpoints. These are endpoints like any other once made: retrieve,
 * update and delete them with `herald.endpoints`.
 */
export class OperationalWebhooks {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/operational-endpoints` */
  createEndpoint(params: Body<"createOperationalEndpoint">, options?: RequestOptions): Promise<Endpoint> {
    return this.transport.call("createOperationalEndpoint", { body: params }, options);
  }

  /** `GET /v3/operational-endpoints` */
  listEndpoints(
    query: Query<"listOperationalEndpoints"> = {},
    options?: RequestOptions,
  ): PageIterator<Endpoint, Query<"listOperationalEndpoints">> {
    return this.transport.list("listOperationalEndpoints", undefined, query, options);
  }

  /** `GET /v3/operational-event-types`: the notices there are. All of them: the API takes no cursor here. */
  listEventTypes(options?: RequestOptions): Promise<Page<Item<"listOperationalEventTypes">>> {
    return this.transport.call("listOperationalEventTypes", {}, options);
  }
}
