import type { Body, Query, Transport } from "../client.ts";
import type { App, Operations } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** Apps (`/v3/apps`): one per customer of yours. Wherever an app is named, its `uid` works as well as its id. */
export class Apps {
  constructor(private readonly transport: Transport) {}

  /** `POST /v3/apps` */
  create(params: Body<"createApp">, options?: RequestOptions): Promise<App> {
    return this.transport.call("createApp", { body: params }, options);
  }

  /** `GET /v3/apps`, newest first: iterate for every app, or `.firstPage()`. */
  list(query: Query<"listApps"> = {}, options?: RequestOptions): PageIterator<App, Query<"listApps">> {
    return this.transport.list("listApps", undefined, query, options);
  }

  /** `GET /v3/apps/{app}`, by id or uid. */
  retrieve(app: string, options?: RequestOptions): Promise<App> {
    return this.transport.call("retrieveApp", { params: { app } }, options);
  }

  /** `POST /v3/apps/{app}`: a new `name` or `uid` (null removes it). */
  update(app: string, params: Body<"updateApp">, options?: RequestOptions): Promise<App> {
    return this.transport.call("updateApp", { params: { app }, body: params }, options);
  }

  /** `DELETE /v3/apps/{app}` */
  delete(app: string, options?: RequestOptions): Promise<Operations["deleteApp"]["response"]> {
    return this.transport.call("deleteApp", { params: { app } }, options);
  }
}
