import type { Query, Transport } from "../client.ts";
import type { AuditRecord } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";
import type { PageIterator } from "../paging.ts";

/** The account's audit log (`/v3/audit-log`): who changed what, newest first. */
export class AuditLog {
  constructor(private readonly transport: Transport) {}

  /** `GET /v3/audit-log` (scope `audit_log:read`), filtered by actor, action, object or time. */
  list(
    query: Query<"listAuditLog"> = {},
    options?: RequestOptions,
  ): PageIterator<AuditRecord, Query<"listAuditLog">> {
    return this.transport.list("listAuditLog", undefined, query, options);
  }
}
