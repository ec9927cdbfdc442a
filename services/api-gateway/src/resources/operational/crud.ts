import { newId, type PrismaClient } from "@herald/db";
import type { Ctx } from "../../context.ts";
import { type PageQuery, pagingProperties } from "../../http/paging.ts";
import { listOf, type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { type CreateInput, createEndpoint, endpointPage } from "../endpoints/crud.ts";
import { endpointFields } from "../endpoints/input.ts";
import { OPERATIONAL_CATALOG } from "./catalog.ts";

/**
 * Operational webhooks: endpoints of the account's own, told what happens to its customers'
 * endpoints (the catalog in catalog.ts). They belong to the account's operational
 * app, made on first use and never listed with its apps; once made, they are endpoints like
 * any other: read, change, delete, rotate their secret, replay and list their attempts at
 * /v3/endpoints/{id} and /v3/attempts?endpoint=.
 */
const OPERATIONAL_APP_NAME = "Operational webhooks";

/** The account's operational app, made when first asked for (one an account: a partial unique index). */
async function operationalApp(prisma: PrismaClient, accountId: string): Promise<string> {
  await prisma.$executeRaw`
    INSERT INTO apps (id, account_id, name, operational) VALUES (${newId("app")}, ${accountId}, ${OPERATIONAL_APP_NAME}, true)
    ON CONFLICT (account_id) WHERE operational AND deleted_at IS NULL DO NOTHING`;
  const app = await prisma.app.findFirstOrThrow({
    where: { accountId, operational: true, deletedAt: null },
    select: { id: true },
  });
  return app.id;
}

export const operationalSchemas: Record<string, Schema> = {
  OperationalEventType: {
    type: "object",
    required: ["object", "name", "description", "schema"],
    properties: {
      object: { const: "operational_event_type" },
      name: { enum: Object.keys(OPERATIONAL_CATALOG) },
      description: { type: "string" },
      schema: { type: "object", description: "The JSON Schema of the event's `data`." },
    },
  },
};

const catalog = Object.entries(OPERATIONAL_CATALOG).map(([name, t]) => ({
  object: "operational_event_type" as const,
  name,
  description: t.description,
  schema: t.schema,
}));

export const operationalRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/operational-endpoints",
    auth: "account",
    scope: "endpoints:write",
    audit: "endpoint.created",
    tag: "Operational webhooks",
    summary: "Create an operational endpoint",
    description:
      "Registers a URL of yours that Herald tells when your customers' endpoints change: disabled, paused, recovered, a delivery exhausted, a replay completed (GET /v3/operational-event-types). Signed, retried and logged like every delivery. `event_types` are operational type names; empty means all. Nothing is told about operational endpoints themselves.",
    body: {
      type: "object",
      additionalProperties: false,
      required: ["url"],
      properties: {
        ...endpointFields,
        secret: {
          type: "string",
          description: "A signing secret of your own: `whsec_` and base64 of 24 to 64 bytes.",
        },
      },
    },
    response: { status: 201, schema: ref("Endpoint"), description: "The endpoint, of the operational app." },
    async handler({ account, body, deps, req, audit }: Ctx<object, object, CreateInput>) {
      const id = await operationalApp(deps.prisma, account.id);
      const created = await createEndpoint(
        deps,
        account,
        req,
        { id, ref: id, operational: true },
        body,
        audit,
      );
      return { status: 201, body: created };
    },
  },
  {
    method: "get",
    path: "/v3/operational-endpoints",
    auth: "account",
    scope: "endpoints:read",
    tag: "Operational webhooks",
    summary: "List operational endpoints",
    query: { type: "object", additionalProperties: false, properties: { ...pagingProperties } },
    response: { status: 200, schema: listOf("Endpoint"), description: "A page of them, newest first." },
    async handler({ account, query, deps }: Ctx<object, PageQuery>) {
      const where = { app: { operational: true, deletedAt: null } };
      return { body: await endpointPage(deps, account.id, where, query) };
    },
  },
  {
    method: "get",
    path: "/v3/operational-event-types",
    auth: "account",
    scope: "event_types:read",
    tag: "Operational webhooks",
    summary: "List operational event types",
    description:
      "What Herald tells operational endpoints, each with the JSON Schema of its `data`. The body received is `{ type, timestamp, data }`, as for every event; the OpenAPI document lists them under `webhooks` too.",
    response: {
      status: 200,
      schema: listOf("OperationalEventType"),
      description: "Every operational event type.",
    },
    async handler() {
      return { body: { object: "list", data: catalog, has_more: false } };
    },
  },
];
