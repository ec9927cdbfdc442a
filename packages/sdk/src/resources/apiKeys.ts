import type { Body, Query, Result, Transport } from "../client.ts";
import type { ApiKey } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** API keys (`/v3/api-keys`) of the account. */
export class ApiKeys {
  constructor(private readonly transport: Transport) {}

  /**
   * `POST /v3/api-keys` (scope `keys`): the secret `key` is in this response only. `scopes`,
   * `app` and `expires_at` narrow it; by default it holds what the calling key holds.
   */
  create(params: Body<"createApiKey"> = {}, options?: RequestOptions): Promise<ApiKey> {
    return this.transport.call("createApiKey", { body: params }, options);
  }

  /** `GET /v3/api-keys` (scope `keys`) */
  list(
    query: Query<"listApiKeys"> = {},
    options?: RequestOptions,
  ): PageIterator<ApiKey, Query<"listApiKeys">> {
    return this.transport.list("listApiKeys", undefined, query, options);
  }

  /** `DELETE /v3/api-keys/{id}` (scope `keys`) */
  revoke(id: string, options?: RequestOptions): Promise<Result<"revokeApiKey">> {
    return this.transport.call("revokeApiKey", { params: { id } }, options);
  }
}
