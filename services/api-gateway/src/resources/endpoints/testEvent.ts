import { OPERATIONAL_TYPES } from "@herald/db/lifecycle";
import type { Ctx } from "../../context.ts";
import { invalid } from "../../http/errors.ts";
import { type RouteSpec, ref } from "../../http/route.ts";
import { exampleOrNull } from "../../schemas/example.ts";
import { acceptEvent, eventTypeFor } from "../events/send.ts";
import { findEndpoint } from "./crud.ts";

type TestBody = { type?: string; data?: Record<string, unknown> };

/**
 * A test event for one endpoint: a real event, stored and logged like any other, that only
 * this endpoint receives. Without `type`, the first type the endpoint receives (or the
 * account's first); without `data`, the type's example payload.
 *
 * An operational endpoint (operational/crud.ts) is sent one of the account's ordinary types, never
 * one named as Herald's own notices are: what arrives as `endpoint.disabled` there is always
 * Herald's. Its `event_types` list Herald's types only, so they neither pick nor limit the type.
 */
const operationalTypes = new Set<string>(OPERATIONAL_TYPES);
export const testEventRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/endpoints/{id}/test",
    auth: "account",
    scope: "endpoints:write",
    audit: false,
    portal: "write",
    tag: "Endpoints",
    summary: "Send a test event to an endpoint",
    description:
      "Sends an event to this endpoint only. `type` defaults to the first type the endpoint receives, `data` to the type's example payload. The event must match the type's schema, as any event does. An operational endpoint is sent one of your ordinary event types (by default your first), whatever its `event_types`; an operational type name (`endpoint.disabled`, …) is `400 operational_type`, so what arrives there as one is always Herald's own.",
    params: { id: "The endpoint's id." },
    body: {
      type: "object",
      additionalProperties: false,
      properties: {
        type: {
          type: "string",
          minLength: 1,
          maxLength: 64,
          description:
            "An event type the endpoint receives; for an operational endpoint, any of your event types but the operational ones.",
        },
        data: {
          type: "object",
          description: "The payload; by default the type's example. In a form body, a JSON string.",
        },
      },
    },
    formJson: ["data"],
    response: { status: 201, schema: ref("Event"), description: "The test event, accepted." },
    async handler({ account, params, body, deps }: Ctx<{ id: string }, object, TestBody>) {
      const endpoint = await findEndpoint(deps.prisma, account, params.id);
      if (endpoint.disabled)
        throw invalid(
          undefined,
          "The endpoint is disabled; enable it to send it a test event.",
          "endpoint_disabled",
        );
      const operational = endpoint.app.operational;
      if (operational && body.type !== undefined && operationalTypes.has(body.type))
        throw invalid(
          "type",
          `'${body.type}' is an operational event type: only Herald sends those to an operational endpoint. Send it a test event of one of your own event types.`,
          "operational_type",
        );
      const name =
        body.type ??
        (operational ? undefined : endpoint.eventTypes[0]) ??
        (
          await deps.prisma.eventType.findFirst({
            where: {
              accountId: account.id,
              archivedAt: null,
              ...(operational ? { name: { notIn: [...operationalTypes] } } : {}),
            },
            orderBy: { name: "asc" },
          })
        )?.name;
      if (!name) throw invalid("type", "There is no event type to send: create one first.");
      if (!operational && endpoint.eventTypes.length && !endpoint.eventTypes.includes(name)) {
        throw invalid(
          "type",
          `This endpoint does not receive '${name}'; it receives ${endpoint.eventTypes.join(", ")}.`,
        );
      }
      const type = await eventTypeFor(deps, account.id, name);
      const data =
        body.data ??
        ((type?.schema ? exampleOrNull(type.schema) : null) as Record<string, unknown> | null) ??
        {};
      return {
        status: 201,
        body: await acceptEvent(deps, account, { id: endpoint.appId }, name, data, endpoint.id),
      };
    },
  },
];
