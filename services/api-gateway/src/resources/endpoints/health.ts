import { idFloor } from "@herald/db";
import type { Ctx, Deps } from "../../context.ts";
import { notFound } from "../../http/errors.ts";
import { pagingProperties } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { appRef, iso, listAppFilter, nullableTimestamp } from "../common.ts";
import { WINDOWS } from "../stats/index.ts";
import { findEndpoint } from "./crud.ts";
import { deliveryState, deliveryStateSchema, type FlowRow } from "./state.ts";

/**
 * Endpoints' health over the last 24 hours: one endpoint's for the portal's health line, and
 * every endpoint's at once, the ones needing attention first, for the dashboard.
 */
const healthCounts: Record<string, Schema> = {
  succeeded: { type: "integer", description: "Attempts that succeeded in the last 24 hours." },
  failed: { type: "integer", description: "Attempts that failed in the last 24 hours." },
  success_rate: {
    type: ["number", "null"],
    description: "Succeeded ÷ attempted over the last 24 hours; null without attempts.",
  },
  last_attempt_at: {
    ...nullableTimestamp,
    description: "When its last attempt completed (at any time); null before the first.",
  },
  failing_since: {
    ...nullableTimestamp,
    description: "Since when every attempt has failed; null while it succeeds.",
  },
};

export const endpointHealthSchemas: Record<string, Schema> = {
  EndpointStats: {
    type: "object",
    required: [
      "object",
      "endpoint",
      "window",
      "succeeded",
      "failed",
      "success_rate",
      "last_attempt_at",
      "failing_since",
    ],
    properties: {
      object: { const: "endpoint_stats" },
      endpoint: { type: "string" },
      window: { const: "24h" },
      ...healthCounts,
    },
  },
  EndpointHealth: {
    type: "object",
    required: [
      "object",
      "endpoint",
      "app",
      "url",
      "description",
      "disabled",
      "delivery_state",
      "succeeded",
      "failed",
      "success_rate",
      "last_attempt_at",
      "failing_since",
    ],
    properties: {
      object: { const: "endpoint_health" },
      endpoint: { type: "string", description: "The endpoint's id." },
      app: { type: "string", description: "The endpoint's app." },
      url: { type: "string" },
      description: { type: "string" },
      disabled: { type: "boolean" },
      delivery_state: deliveryStateSchema,
      ...healthCounts,
    },
  },
};

export const endpointHealthRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/endpoints/{id}/stats",
    auth: "account",
    scope: "endpoints:read",
    portal: "read",
    tag: "Endpoints",
    summary: "An endpoint's health",
    description:
      "Its attempts over the last 24 hours, success rate, last attempt, and since when it has only failed.",
    params: { id: "The endpoint's id." },
    response: { status: 200, schema: ref("EndpointStats"), description: "The endpoint's health." },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const endpoint = await findEndpoint(deps.prisma, account, params.id);
      const [row] = await health(deps, { accountId: account.id, endpointId: endpoint.id, hiddenApps: [] }, 1);
      // Deleted since it was found: as gone as if it had been before.
      if (!row) throw notFound("endpoint", params.id);
      return { body: { object: "endpoint_stats", endpoint: endpoint.id, window: "24h", ...countsOf(row) } };
    },
  },
  {
    method: "get",
    path: "/v3/stats/endpoints",
    auth: "account",
    scope: "endpoints:read",
    portal: "read",
    tag: "Endpoints",
    summary: "Endpoints' health, failing first",
    description:
      "Each endpoint (deleted ones left out, and those of the operational app unless `app` names it) with its attempts over the last 24 hours, success rate, last attempt, since when it has only failed, and how deliveries to it go now (`delivery_state`). Ordered for attention: endpoints failing now first (the longest failing first), then paused ones, then disabled ones, then by success rate, lowest first (endpoints without attempts last). Only the first page: `has_more` says whether there are more endpoints than `limit`.",
    query: {
      type: "object",
      additionalProperties: false,
      properties: { app: appRef, limit: pagingProperties.limit },
    },
    response: {
      status: 200,
      schema: listOf("EndpointHealth"),
      description: "The endpoints, the ones needing attention first.",
    },
    async handler({ account, query, deps }: Ctx<object, { app?: string; limit: number }>) {
      const apps = await listAppFilter(deps, account, query.app);
      const now = new Date();
      const rows = await health(
        deps,
        // Deleted endpoints are left out, those of deleted apps with them, and the operational
        // app's unless named: as every list across the account (listAppFilter).
        { accountId: account.id, ...(apps.appId ? { appId: apps.appId } : {}), hiddenApps: apps.hidden },
        query.limit + 1,
        now,
      );
      return {
        body: {
          object: "list",
          data: rows.slice(0, query.limit).map(serializeHealth(now)),
          has_more: rows.length > query.limit,
        },
      };
    },
  },
];

type HealthRow = {
  id: string;
  app_id: string;
  url: string;
  description: string;
  disabled: boolean;
  disabled_reason: string | null;
  rate_limit: number | null;
  max_in_flight: number | null;
  failing_since: Date | null;
  /** Its `endpoint_flows` row, null when it has none (a flow is made when first needed). */
  flow_endpoint: string | null;
  limit_now: number | null;
  slow_until: Date | null;
  paused_until: Date | null;
  pause_reason: string | null;
  failures: number | null;
  probe_attempt_id: string | null;
  held_by: string | null;
  next_release_at: Date | null;
  /** Paused now: its place in the order (see health()). */
  paused: boolean;
  succeeded: number;
  failed: number;
  success_rate: number | null;
  last_attempt_at: Date | null;
};

/**
 * Endpoints' health in one statement, the ones needing attention first: the 24-hour counts
 * over the window's id range (as the buckets of stats/index.ts), then each listed endpoint's last
 * completed attempt through the (endpoint, id) index. `paused` is deliveryState()'s test of a
 * pause (state.ts), at the same `now` the rows are described at, so an endpoint listed
 * among the paused ones also reads as paused.
 */
async function health(
  deps: Deps,
  filter: { accountId: string; appId?: string; endpointId?: string; hiddenApps: string[] },
  limit: number,
  now = new Date(),
): Promise<HealthRow[]> {
  const since = new Date(now.getTime() - WINDOWS["24h"].ms);
  // Paused endpoints need attention (nothing reaches them) but are not failing: right after those that are.
  const order = "failing_since ASC NULLS LAST, paused DESC, disabled DESC, success_rate ASC NULLS LAST, id";
  const { rows } = await deps.pool.query<HealthRow>(
    `WITH counts AS (
       SELECT endpoint_id,
              count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
              count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM attempts
       WHERE account_id = $1 AND id >= $2 AND completed_at >= $3
         AND ($4::text IS NULL OR app_id = $4) AND ($5::text IS NULL OR endpoint_id = $5)
         AND NOT app_id = ANY($8::text[])
       GROUP BY endpoint_id),
     health AS (
       SELECT ep.id, ep.app_id, ep.url, ep.description, ep.disabled, ep.disabled_reason,
              ep.rate_limit, ep.max_in_flight, ep.failing_since,
              coalesce(c.succeeded, 0) AS succeeded, coalesce(c.failed, 0) AS failed,
              c.succeeded::float8 / nullif(c.succeeded + c.failed, 0) AS success_rate,
              f.endpoint_id AS flow_endpoint, f.limit_now, f.slow_until, f.paused_until, f.pause_reason,
              f.failures, f.probe_attempt_id, f.held_by, f.next_release_at,
              (NOT ep.disabled AND (f.pause_reason = 'not_responding' OR f.paused_until > $7))
                IS TRUE AS paused
       FROM endpoints ep LEFT JOIN counts c ON c.endpoint_id = ep.id
            LEFT JOIN endpoint_flows f ON f.endpoint_id = ep.id
       WHERE ep.account_id = $1 AND ep.deleted_at IS NULL
         AND ($4::text IS NULL OR ep.app_id = $4) AND ($5::text IS NULL OR ep.id = $5)
         AND NOT ep.app_id = ANY($8::text[])
       ORDER BY ${order} LIMIT $6)
     SELECT h.*,
            (SELECT a.completed_at FROM attempts a
             WHERE a.endpoint_id = h.id AND a.completed_at IS NOT NULL
             ORDER BY a.id DESC LIMIT 1) AS last_attempt_at
     FROM health h ORDER BY ${order}`,
    [
      filter.accountId,
      idFloor("attempt", since.getTime() - 60_000),
      since,
      filter.appId ?? null,
      filter.endpointId ?? null,
      limit,
      now,
      filter.hiddenApps,
    ],
  );
  return rows;
}

const countsOf = (r: HealthRow) => ({
  succeeded: r.succeeded,
  failed: r.failed,
  success_rate: r.success_rate,
  last_attempt_at: iso(r.last_attempt_at),
  failing_since: iso(r.failing_since),
});

/** The flow columns in the shape deliveryState() reads (that of the Prisma model). */
const flowOf = (r: HealthRow): FlowRow | null =>
  r.flow_endpoint === null
    ? null
    : {
        limitNow: r.limit_now,
        slowUntil: r.slow_until,
        pausedUntil: r.paused_until,
        pauseReason: r.pause_reason,
        failures: r.failures ?? 0,
        probeAttemptId: r.probe_attempt_id,
        heldBy: r.held_by,
        nextReleaseAt: r.next_release_at,
      };

const serializeHealth = (now: Date) => (r: HealthRow) => ({
  object: "endpoint_health" as const,
  endpoint: r.id,
  app: r.app_id,
  url: r.url,
  description: r.description,
  disabled: r.disabled,
  delivery_state: deliveryState(
    {
      disabled: r.disabled,
      disabledReason: r.disabled_reason,
      rateLimit: r.rate_limit,
      maxInFlight: r.max_in_flight,
      flow: flowOf(r),
    },
    now,
  ),
  ...countsOf(r),
});
