import type { Query, Result, Transport } from "../client.ts";
import type { Attempt } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** Attempts (`/v3/attempts`): each HTTP call made to deliver an event to an endpoint. */
export class Attempts {
  constructor(private readonly transport: Transport) {}

  /** `GET /v3/attempts`, filtered by `endpoint`, `event`, `status`, `app`. */
  list(
    query: Query<"listAttempts"> = {},
    options?: RequestOptions,
  ): PageIterator<Attempt, Query<"listAttempts">> {
    return this.transport.list("listAttempts", undefined, query, options);
  }

  /** `GET /v3/attempts/{id}`, with the request as sent. */
  retrieve(id: string, options?: RequestOptions): Promise<Result<"retrieveAttempt">> {
    return this.transport.call("retrieveAttempt", { params: { id } }, options);
  }

  /** `GET /v3/stats/attempts`: counts over a window, by `app` or `endpoint`. */
  stats(
    query: Query<"attemptStatistics"> = {},
    options?: RequestOptions,
  ): Promise<Result<"attemptStatistics">> {
    return this.transport.call("attemptStatistics", { query }, options);
  }
}
