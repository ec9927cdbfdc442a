import type { Body, Query, Result, Transport } from "../client.ts";
import type { EventType } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** Event types (`/v3/event-types`), by name; an optional JSON Schema checks each event's data. */
export class EventTypes {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/event-types` */
  create(params: Body<"createEventType">, options?: RequestOptions): Promise<EventType> {
    return this.transport.call("createEventType", { body: params }, options);
  }

  /** `GET /v3/event-types`; archived ones only with `include_archived: true`. */
  list(
    query: Query<"listEventTypes"> = {},
    options?: RequestOptions,
  ): PageIterator<EventType, Query<"listEventTypes">> {
    return this.transport.list("listEventTypes", undefined, query, options, (t) => t.name);
  }

  /** `GET /v3/event-types/{name}` */
  retrieve(name: string, options?: RequestOptions): Promise<EventType> {
    return this.transport.call("retrieveEventType", { params: { name } }, options);
  }

  /** `POST /v3/event-types/{name}`: a new description or schema. Names are permanent. */
  update(name: string, params: Body<"updateEventType">, options?: RequestOptions): Promise<EventType> {
    return this.transport.call("updateEventType", { params: { name }, body: params }, options);
  }

  /** `DELETE /v3/event-types/{name}`: archives it, as `archive` does. */
  delete(name: string, options?: RequestOptions): Promise<EventType> {
    return this.transport.call("deleteArchiveEventType", { params: { name } }, options);
  }

  /** `POST /v3/event-types/{name}/archive`: it accepts no new events, and stays in the logs. */
  archive(name: string, options?: RequestOptions): Promise<EventType> {
    return this.transport.call("archiveEventType", { params: { name } }, options);
  }

  /** `POST /v3/event-types/{name}/unarchive` */
  unarchive(name: string, options?: RequestOptions): Promise<EventType> {
    return this.transport.call("unarchiveEventType", { params: { name } }, options);
  }

  /** `POST /v3/json-schema/validate`: whether an event type would accept `schema`, and an example payload. */
  validateSchema(
    params: Body<"validateJsonSchema">,
    options?: RequestOptions,
  ): Promise<Result<"validateJsonSchema">> {
    return this.transport.call("validateJsonSchema", { body: params }, options);
  }
}
