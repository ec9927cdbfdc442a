import type { Body, Query, Result, Transport } from "../client.ts";
import type {
  Endpoint,
  EndpointSecret,
  Replay,
  ReplayPreview,
  TransformationTest,
} from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { Page, PageIterator } from "../paging.ts";

/** Endpoints (`/v3/endpoints`): where an app's events are delivered, signed with the endpoint's secret. */
export class Endpoints {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/endpoints` */
  create(params: Body<"createEndpoint">, options?: RequestOptions): Promise<Endpoint> {
    return this.transport.call("createEndpoint", { body: params }, options);
  }

  /** `GET /v3/endpoints`, all apps' or one `app`'s. */
  list(
    query: Query<"listEndpoints"> = {},
    options?: RequestOptions,
  ): PageIterator<Endpoint, Query<"listEndpoints">> {
    return this.transport.list("listEndpoints", undefined, query, options);
  }

  /** `GET /v3/endpoints/{id}` */
  retrieve(id: string, options?: RequestOptions): Promise<Endpoint> {
    return this.transport.call("retrieveEndpoint", { params: { id } }, options);
  }

  /** `POST /v3/endpoints/{id}` */
  update(id: string, params: Body<"updateEndpoint">, options?: RequestOptions): Promise<Endpoint> {
    return this.transport.call("updateEndpoint", { params: { id }, body: params }, options);
  }

  /** `DELETE /v3/endpoints/{id}`: its pending retries are dropped; its attempts stay readable. */
  delete(id: string, options?: RequestOptions): Promise<Result<"deleteEndpoint">> {
    return this.transport.call("deleteEndpoint", { params: { id } }, options);
  }

  /** `GET /v3/endpoints/{id}/secret`: the `whsec_…` signing secret, for `verifyWebhook`. */
  retrieveSecret(id: string, options?: RequestOptions): Promise<EndpointSecret> {
    return this.transport.call("retrieveEndpointSigningSecret", { params: { id } }, options);
  }

  /** `POST /v3/endpoints/{id}/secret/rotate`: a new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(
    id: string,
    params: Body<"rotateEndpointSigningSecret"> = {},
    options?: RequestOptions,
  ): Promise<EndpointSecret> {
    return this.transport.call("rotateEndpointSigningSecret", { params: { id }, body: params }, options);
  }

  /** `POST /v3/endpoints/{id}/replay`: queues its failed deliveries again; follow it with `herald.replays.retrieve`. */
  replay(id: string, params: Body<"replayFailedDeliveries"> = {}, options?: RequestOptions): Promise<Replay> {
    return this.transport.call("replayFailedDeliveries", { params: { id }, body: params }, options);
  }

  /** `GET /v3/endpoints/{id}/replay/preview`: what `replay` with the same filters would queue now, queuing nothing. */
  previewReplay(
    id: string,
    query: Query<"previewReplay"> = {},
    options?: RequestOptions,
  ): Promise<ReplayPreview> {
    return this.transport.call("previewReplay", { params: { id }, query }, options);
  }

  /** `POST /v3/endpoints/{id}/test`: sends it a test event, to it alone. */
  sendTestEvent(
    id: string,
    params: Body<"sendTestEventToEndpoint"> = {},
    options?: RequestOptions,
  ): Promise<Result<"sendTestEventToEndpoint">> {
    return this.transport.call("sendTestEventToEndpoint", { params: { id }, body: params }, options);
  }

  /**
   * `POST /v3/endpoints/{id}/transformation/test`: runs its transformation (or `transformation`,
   * an edit not saved yet) on `event_type`'s example or on `event`: the request it would send,
   * `cancelled`, or the `error` with its line. Nothing is stored or sent.
   */
  testTransformation(
    id: string,
    params: Body<"testEndpointTransformation">,
    options?: RequestOptions,
  ): Promise<TransformationTest> {
    return this.transport.call("testEndpointTransformation", { params: { id }, body: params }, options);
  }

  /** `POST /v3/endpoints/transformation/test`: the same for an endpoint not made yet (`app`, `url`, `headers`). */
  testUnsavedTransformation(
    params: Body<"testUnsavedTransformation">,
    options?: RequestOptions,
  ): Promise<TransformationTest> {
    return this.transport.call("testUnsavedTransformation", { body: params }, options);
  }

  /** `GET /v3/endpoints/{id}/stats`: its attempts over the last 24 hours and how deliveries to it go now. */
  health(id: string, options?: RequestOptions): Promise<Result<"endpointHealth">> {
    return this.transport.call("endpointHealth", { params: { id } }, options);
  }

  /** `GET /v3/stats/endpoints`: endpoints' health, failing first. One page only: the API takes no cursor here. */
  listHealth(
    query: Query<"endpointsHealthFailingFirst"> = {},
    options?: RequestOptions,
  ): Promise<Page<Result<"endpointsHealthFailingFirst">["data"][number]>> {
    return this.transport.call("endpointsHealthFailingFirst", { query }, options);
  }
}
