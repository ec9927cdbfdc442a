import { isId, newId } from "@herald/db";
import { claimReplay, previewReplay } from "@herald/db/lifecycle";
import type { Account, Ctx, Deps } from "../../context.ts";
import { invalid, notFound } from "../../http/errors.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import {
  checkAppLive,
  checkAppReach,
  iso,
  nullableTimestamp,
  parseTime,
  timeInput,
  timestamp,
} from "../common.ts";
import { findEndpoint } from "../endpoints/crud.ts";
import { replayCompleted, stageInPrisma } from "../operational/notices.ts";

type ReplayRow = {
  id: string;
  endpointId: string;
  since: Date | null;
  eventId: string | null;
  status: string;
  queued: number;
  createdAt: Date;
  completedAt: Date | null;
};

type Progress = { attempted: number; succeeded: number; failed: number; pending: number };

export const serializeReplay = (
  r: ReplayRow,
  progress: Progress = { attempted: 0, succeeded: 0, failed: 0, pending: 0 },
) => ({
  id: r.id,
  object: "replay" as const,
  endpoint: r.endpointId,
  status: r.status,
  queued: r.queued,
  ...progress,
  since: iso(r.since),
  event: r.eventId,
  created_at: iso(r.createdAt),
  completed_at: iso(r.completedAt),
});

export const replaySchemas: Record<string, Schema> = {
  Replay: {
    type: "object",
    required: [
      "id",
      "object",
      "endpoint",
      "status",
      "queued",
      "attempted",
      "succeeded",
      "failed",
      "pending",
      "since",
      "event",
      "created_at",
      "completed_at",
    ],
    properties: {
      id: { type: "string", examples: ["rpl_01JD3Z6Q4X6N3V8H2K9T5R7M1B"] },
      object: { const: "replay" },
      endpoint: { type: "string" },
      status: {
        enum: ["queued", "running", "completed"],
        description:
          "`completed` once every queued delivery was handed to a sender again; their results follow in the counts.",
      },
      queued: { type: "integer", description: "How many failed deliveries this replay tries again." },
      attempted: { type: "integer", description: "Of those, how many have been attempted again so far." },
      succeeded: { type: "integer", description: "Replayed attempts that succeeded." },
      failed: {
        type: "integer",
        description:
          "Replayed attempts that failed: their deliveries retry while the schedule has steps left, else end failed again.",
      },
      pending: {
        type: "integer",
        description:
          "Replayed attempts still waiting for their result. `completed` with none pending: the replay is over; `queued` minus `attempted` were not tried (the endpoint disabled or deleted, or their events erased, meanwhile).",
      },
      since: nullableTimestamp,
      event: { type: ["string", "null"] },
      created_at: timestamp,
      completed_at: nullableTimestamp,
    },
  },
  ReplayPreview: {
    type: "object",
    required: [
      "object",
      "endpoint",
      "endpoint_disabled",
      "count",
      "since",
      "event",
      "deliveries",
      "has_more",
    ],
    properties: {
      object: { const: "replay_preview" },
      endpoint: { type: "string" },
      endpoint_disabled: {
        type: "boolean",
        description: "A disabled endpoint must be enabled before the replay is asked for.",
      },
      count: {
        type: "integer",
        description: "How many failed deliveries a replay would queue now, counted up to 10,000.",
      },
      count_capped: {
        type: "boolean",
        description: "True when there are more than 10,000: `count` is then 10,000.",
      },
      since: nullableTimestamp,
      event: { type: ["string", "null"] },
      deliveries: {
        type: "array",
        description: "The first 100 of them, oldest first.",
        items: {
          type: "object",
          required: ["event", "event_type", "attempts", "failed_at"],
          properties: {
            event: { type: "string" },
            event_type: { type: "string" },
            attempts: { type: "integer", description: "Attempts made so far." },
            failed_at: { ...timestamp, description: "When it failed: its last attempt." },
          },
        },
      },
      has_more: { type: "boolean", description: "Whether `count` is more than `deliveries` lists." },
    },
  },
};

type ReplayBody = { since?: string | number; event?: string };

const replayFilterProperties = {
  since: {
    ...timeInput,
    description: "Only deliveries whose last failure was at or after this time (ISO 8601 or unix seconds).",
  },
  event: { type: "string", description: "Only this event's delivery." },
} satisfies Record<string, Schema>;

/** `since` as a time, and `event` checked to be the account's: what a replay, or its preview, takes. */
async function replayFilter(deps: Deps, account: Account, body: ReplayBody): Promise<Date | null> {
  const since = body.since !== undefined ? parseTime(body.since) : null;
  if (since && Number.isNaN(since.getTime()))
    throw invalid("since", "since must be an ISO 8601 time or unix seconds, of a year from 1 to 9999.");
  if (body.event !== undefined) {
    const event = isId("event", body.event)
      ? await deps.prisma.event.findFirst({
          where: { id: body.event, accountId: account.id },
          select: { id: true, appId: true },
        })
      : null;
    if (!event) throw notFound("event", body.event, "event");
    checkAppReach(account, event.appId, "event", body.event, "event");
  }
  return since;
}

/** Deliveries a preview lists at most; its `count` is of all of them. */
const PREVIEW_MAX = 100;

export const replayRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/endpoints/{id}/replay",
    auth: "account",
    scope: "endpoints:write",
    audit: "replay.created",
    portal: "write",
    tag: "Endpoints",
    summary: "Replay failed deliveries",
    description:
      "Queues every `failed` delivery of the endpoint again, oldest first: all of them, only those that failed at or after `since`, or only `event`'s. A delivery another unfinished replay counted is not counted again, so `queued` is the exact number that will be tried (unless the endpoint is disabled or deleted, or an event erased, meanwhile). A disabled endpoint must be enabled first.",
    params: { id: "The endpoint's id." },
    body: {
      type: "object",
      additionalProperties: false,
      properties: replayFilterProperties,
    },
    response: { status: 202, schema: ref("Replay"), description: "The replay, queued." },
    async handler({ account, params, body, deps, audit }: Ctx<{ id: string }, object, ReplayBody>) {
      const endpoint = await findEndpoint(deps.prisma, account, params.id);
      if (endpoint.disabled)
        throw invalid(
          undefined,
          "The endpoint is disabled; enable it before replaying its deliveries.",
          "endpoint_disabled",
        );
      const since = await replayFilter(deps, account, body);
      // The cutoff pins the set: deliveries failing after the request are not part of it.
      const cutoff = new Date();
      const id = newId("replay");
      const spec = { replayId: id, endpointId: endpoint.id, cutoff, since, eventId: body.event ?? null };
      const [replay, rows] = await deps.prisma.$transaction(async (tx) => {
        // Claimed as counted: a replay asked for at the same moment cannot count them too.
        const queued = await claimReplay((text, values) => tx.$executeRawUnsafe(text, ...values), spec);
        const replay = await tx.replay.create({
          data: {
            id,
            accountId: account.id,
            endpointId: endpoint.id,
            since,
            eventId: body.event ?? null,
            status: queued ? "queued" : "completed",
            queued,
            createdAt: cutoff,
            completedAt: queued ? null : cutoff,
          },
        });
        await audit(tx, { type: "replay", id });
        const row = queued
          ? await deps.outbox.stage(tx, "replay.requested.v1", {
              replay_id: replay.id,
              account_id: account.id,
              endpoint_id: endpoint.id,
              since: since?.toISOString() ?? null,
              event_id: body.event ?? null,
              cutoff: cutoff.toISOString(),
              claimed: true,
            })
          : null;
        // Nothing to queue: completed now, and told so (operational/notices.ts).
        const told = queued ? [] : await stageInPrisma(tx, [replayCompleted(replay)]);
        return [replay, row ? [row, ...told] : told] as const;
      });
      deps.outbox.publishAfterCommit(rows);
      return { status: 202, body: serializeReplay(replay) };
    },
  },
  {
    method: "get",
    path: "/v3/endpoints/{id}/replay/preview",
    auth: "account",
    scope: "endpoints:read",
    portal: "read",
    tag: "Endpoints",
    summary: "Preview a replay",
    description:
      "What `POST /v3/endpoints/{id}/replay` with the same `since` and `event` would queue now, without queuing anything: how many deliveries, and the first 100 of them, oldest first. A replay asked for later may take fewer, should a retry or another replay take some meanwhile.",
    params: { id: "The endpoint's id." },
    query: { type: "object", additionalProperties: false, properties: replayFilterProperties },
    response: { status: 200, schema: ref("ReplayPreview"), description: "What a replay would take." },
    async handler({ account, params, query, deps }: Ctx<{ id: string }, ReplayBody>) {
      const endpoint = await findEndpoint(deps.prisma, account, params.id);
      const since = await replayFilter(deps, account, query);
      const spec = { endpointId: endpoint.id, cutoff: new Date(), since, eventId: query.event ?? null };
      const preview = await previewReplay(
        (text, values) => deps.prisma.$queryRawUnsafe(text, ...values),
        spec,
        PREVIEW_MAX,
      );
      return {
        body: {
          object: "replay_preview" as const,
          endpoint: endpoint.id,
          endpoint_disabled: endpoint.disabled,
          count: preview.count,
          count_capped: preview.capped,
          since: iso(since),
          event: query.event ?? null,
          deliveries: preview.deliveries.map((d) => ({
            event: d.event_id,
            event_type: d.event_type,
            attempts: d.attempts,
            failed_at: iso(d.failed_at),
          })),
          has_more: preview.count > preview.deliveries.length,
        },
      };
    },
  },
  {
    method: "get",
    path: "/v3/replays/{id}",
    auth: "account",
    scope: "endpoints:read",
    portal: "read",
    tag: "Endpoints",
    summary: "Retrieve a replay",
    params: { id: "The replay's id." },
    response: { status: 200, schema: ref("Replay"), description: "The replay and its status." },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const found = isId("replay", params.id)
        ? await deps.prisma.replay.findFirst({
            where: { id: params.id, accountId: account.id },
            include: { endpoint: { select: { appId: true } } },
          })
        : null;
      if (!found) throw notFound("replay", params.id);
      checkAppReach(account, found.endpoint.appId, "replay", params.id);
      await checkAppLive(deps.prisma, found.endpoint.appId, "replay", params.id);
      const counts = await deps.prisma.attempt.groupBy({
        by: ["status"],
        where: { replayId: found.id },
        _count: { _all: true },
      });
      const of = (status: string) => counts.find((c) => c.status === status)?._count._all ?? 0;
      return {
        body: serializeReplay(found, {
          attempted: of("succeeded") + of("failed"),
          succeeded: of("succeeded"),
          failed: of("failed"),
          pending: of("pending"),
        }),
      };
    },
  },
];
