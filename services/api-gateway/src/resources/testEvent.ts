import type { Ctx } from "../context.ts";
import { invalid } from "../http/errors.ts";
import { type RouteSpec, ref } from "../http/route.ts";
import { exampleOrNull } from "../schemas/example.ts";
import { findEndpoint } from "./endpoints.ts";
import { acceptEvent, eventTypeFor } from "./sendEvent.ts";

type TestBody = { type?: string; data?: Record<string, unknown> };

/**
 * A test event for one endpoint: a real event, stored and logged like any other, that only
 * this endpoint receives. Without `type`, the first type the endpoint receives (or the
 * account's first); without `data`, the type's example payload.
 */
export const testEventRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/endpoints/{id}/test",
    auth: "account",
    portal: "write",
    tag: "Endpoints",
    summary: "Send a test event to an endpoint",
    description:
      "Sends an event to this endpoint only. `type` defaults to the first type the endpoint receives, `data` to the type's example payload. The event must match the type's schema, as any event does.",
    params: { id: "The endpoint's id." },
    body: {
      type: "object",
      additionalProperties: false,
      properties: {
        type: {
          type: "string",
          minLength: 1,
          maxLength: 64,
          description: "An event type the endpoint receives.",
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
      const name =
        body.type ??
        endpoint.eventTypes[0] ??
        (
          await deps.prisma.eventType.findFirst({
            where: { accountId: account.id, archivedAt: null },
            orderBy: { name: "asc" },
          })
        )?.name;
      if (!name) throw invalid("type", "There is no event type to send: create one first.");
      if (endpoint.eventTypes.length && !endpoint.eventTypes.includes(name)) {
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
