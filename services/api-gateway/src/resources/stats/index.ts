import { idFloor } from "@herald/db";
import type { Ctx, Deps } from "../../context.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { appRef, iso, listAppFilter, timestamp } from "../common.ts";
import { findEndpoint } from "../endpoints/crud.ts";

/**
 * Attempt statistics for the dashboard's charts (and endpoints' health, endpoints/health.ts):
 * attempts per bucket by outcome, with duration percentiles. Ids are time-sortable, so a
 * window is an id range and the (account, id) and (endpoint, id) indexes serve it.
 */
export const WINDOWS = {
  "1h": { ms: 3_600_000, bucket: "minute" },
  "24h": { ms: 86_400_000, bucket: "hour" },
} as const;
type Window = keyof typeof WINDOWS;

type Bucket = { start: Date; succeeded: number; failed: number; p50: number | null; p95: number | null };

async function buckets(
  deps: Deps,
  window: Window,
  filter: { accountId: string; appId?: string; endpointId?: string; hiddenApps: string[] },
): Promise<Bucket[]> {
  const { ms, bucket } = WINDOWS[window];
  const since = new Date(Date.now() - ms);
  const { rows } = await deps.pool.query<{
    start: Date;
    succeeded: number;
    failed: number;
    p50: number | null;
    p95: number | null;
  }>(
    `SELECT date_trunc($5, completed_at) AS start,
            count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95
     FROM attempts
     WHERE account_id = $1 AND id >= $2 AND completed_at >= $6
       AND ($3::text IS NULL OR app_id = $3) AND ($4::text IS NULL OR endpoint_id = $4)
       AND NOT app_id = ANY($7)
     GROUP BY 1 ORDER BY 1`,
    [
      filter.accountId,
      idFloor("attempt", since.getTime() - 60_000),
      filter.appId ?? null,
      filter.endpointId ?? null,
      bucket,
      since,
      filter.hiddenApps,
    ],
  );
  return rows;
}

const serializeBucket = (b: Bucket) => ({
  start: iso(b.start),
  succeeded: b.succeeded,
  failed: b.failed,
  p50_ms: b.p50 === null ? null : Math.round(b.p50),
  p95_ms: b.p95 === null ? null : Math.round(b.p95),
});

const bucketSchema: Schema = {
  type: "object",
  required: ["start", "succeeded", "failed", "p50_ms", "p95_ms"],
  properties: {
    start: timestamp,
    succeeded: { type: "integer" },
    failed: { type: "integer" },
    p50_ms: { type: ["integer", "null"], description: "Median attempt duration in the bucket." },
    p95_ms: { type: ["integer", "null"] },
  },
};

export const statsSchemas: Record<string, Schema> = {
  AttemptStats: {
    type: "object",
    required: ["object", "window", "bucket", "data"],
    properties: {
      object: { const: "attempt_stats" },
      window: { enum: Object.keys(WINDOWS) },
      bucket: { enum: ["minute", "hour"] },
      data: { type: "array", items: bucketSchema, description: "Buckets with attempts, oldest first." },
    },
  },
};

const windowParam: Schema = {
  enum: Object.keys(WINDOWS),
  default: "1h",
  description: "`1h` in minutes, or `24h` in hours.",
};

export const statsRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/stats/attempts",
    auth: "account",
    scope: "events:read",
    portal: "read",
    tag: "Attempts",
    summary: "Attempt statistics",
    description:
      "Attempts per minute (or hour) by outcome, with duration percentiles, across the account or one app or endpoint.",
    query: {
      type: "object",
      additionalProperties: false,
      properties: {
        app: appRef,
        endpoint: { type: "string", description: "Only this endpoint." },
        window: windowParam,
      },
    },
    response: { status: 200, schema: ref("AttemptStats"), description: "The buckets of the window." },
    async handler({
      account,
      query,
      deps,
    }: Ctx<object, { app?: string; endpoint?: string; window: Window }>) {
      const apps = await listAppFilter(deps, account, query.app, query.endpoint !== undefined);
      const endpointId =
        query.endpoint !== undefined
          ? (await findEndpoint(deps.prisma, account, query.endpoint, "endpoint")).id
          : undefined;
      const data = await buckets(deps, query.window, {
        accountId: account.id,
        ...(apps.appId ? { appId: apps.appId } : {}),
        ...(endpointId ? { endpointId } : {}),
        hiddenApps: apps.hidden,
      });
      return {
        body: {
          object: "attempt_stats",
          window: query.window,
          bucket: WINDOWS[query.window].bucket,
          data: data.map(serializeBucket),
        },
      };
    },
  },
];
