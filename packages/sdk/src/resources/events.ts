import type { Body, Query, Transport } from "../client.ts";
import type { Delivery, Event, EventDryRun } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** Events (`/v3/events`): what your product sends, fanned out to every endpoint of its app that takes its type. */
export class Events {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/events`: `{ app, type, data }`. Deliveries fill in as the dispatcher works. */
  send(params: Body<"sendEvent">, options?: RequestOptions): Promise<Event> {
    return this.transport.call("sendEvent", { body: params }, options);
  }

  /** `POST /v3/events/dry-run`: which endpoints `send` with these would reach, and why not the others. Nothing is sent. */
  dryRun(params: Body<"dryRunEvent">, options?: RequestOptions): Promise<EventDryRun> {
    return this.transport.call("dryRunEvent", { body: params }, options);
  }

  /** `GET /v3/events`, filtered by `app`, `type`, `status`, `endpoint`. */
  list(query: Query<"listEvents"> = {}, options?: RequestOptions): PageIterator<Event, Query<"listEvents">> {
    return this.transport.list("listEvents", undefined, query, options);
  }

  /** `GET /v3/events/{id}`, with its first 100 deliveries. */
  retrieve(id: string, options?: RequestOptions): Promise<Event> {
    return this.transport.call("retrieveEvent", { params: { id } }, options);
  }

  /** `DELETE /v3/events/{id}/data`: erases its payload; the event and its deliveries stay. */
  erasePayload(id: string, options?: RequestOptions): Promise<Event> {
    return this.transport.call("eraseEventPayload", { params: { id } }, options);
  }

  /** `GET /v3/events/{id}/deliveries`: every delivery of the event, one per endpoint, by endpoint id. */
  listDeliveries(
    id: string,
    query: Query<"listEventDeliveries"> = {},
    options?: RequestOptions,
  ): PageIterator<Delivery, Query<"listEventDeliveries">> {
    // Its cursors are endpoint ids.
    return this.transport.list("listEventDeliveries", { id }, query, options, (d) => d.endpoint);
  }
}
