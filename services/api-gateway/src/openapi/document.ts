import type { RouteSpec, Schema } from "../http/route.ts";
import { operationalWebhooks } from "../resources/operational/catalog.ts";
import { TAGS, type Tag } from "./tags.ts";

/**
 * The OpenAPI 3.1 document, built from the same route table and schemas the gateway
 * validates with. Served at GET /v3/openapi.json and rendered at /docs.
 */
export type OpenApiDocument = {
  openapi: string;
  info: Record<string, unknown>;
  servers: { url: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, unknown>;
    responses: Record<string, unknown>;
  };
  tags: { name: Tag; description: string }[];
  /** What Herald itself POSTs: the operational webhooks. */
  webhooks: Record<string, unknown>;
};

export type Operation = {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  /**
   * The scope an API key or a dashboard session needs for an account's operation
   * (`@herald/contracts/scopes`); `any`: every credential may.
   */
  "x-herald-scope"?: string;
  /** The action a successful call records in the audit log (`app.created`). */
  "x-herald-audit"?: string;
  parameters: {
    name: string;
    in: "path" | "query" | "header";
    required: boolean;
    description?: string;
    schema: Schema;
  }[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
};

const errorSchema: Schema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["type", "code", "message"],
      properties: {
        type: { enum: ["invalid_request_error", "authentication_error", "rate_limit_error", "api_error"] },
        code: { type: "string", examples: ["parameter_invalid", "resource_missing", "idempotency_conflict"] },
        message: { type: "string" },
        param: { type: "string", description: "The parameter at fault, when there is one." },
        details: {
          type: "array",
          description:
            "With `schema_validation_failed`: each violation of the event type's schema. With `invalid_schema`: each problem of the schema, where it is in it.",
          items: { type: "object", properties: { path: { type: "string" }, message: { type: "string" } } },
        },
      },
    },
  },
};

const errorResponses: Record<string, { description: string }> = {
  "400": {
    description:
      "A parameter is missing or invalid (`param` names it), bad JSON, or a bad schema. Text PostgreSQL cannot store (a NUL, `\\u0000`, or an unpaired surrogate) anywhere in a field is invalid, `param` naming where.",
  },
  "401": {
    description:
      "No key, a malformed key, or a revoked key; for a browser, a session that ended, expired, or is not the page's kind (`Herald-Page`).",
  },
  "403": {
    description:
      "The credential may not do this: it lacks the operation's scope (`insufficient_scope`, naming it in the message and in `details[0].scope`); it is a key confined to one app and the operation spans the account (`app_confined`); or it is a browser session (`forbidden`): a portal session only what the portal shows of its app, and only reads when read-only; a dashboard session anything its scopes cover but making or revoking API keys.",
  },
  "404": { description: "No such object in this account (another account's objects are 404 too)." },
  "409": {
    description:
      "A duplicate (`resource_exists`), an Idempotency-Key reused with another request (`idempotency_conflict`), or one whose first request is still running (`idempotency_in_progress`, with `Retry-After`).",
  },
  "413": { description: "The body is over 1 MiB." },
  "415": { description: "The body is neither JSON nor form-encoded." },
  "422": {
    description:
      "`data` does not match the event type's schema (`schema_validation_failed`, with `details`).",
  },
  "429": {
    description:
      "Over the account's request rate, or its rate of transformations saved or tried (`rate_limited`), or the transformation workers too busy for now (`transformation_busy`); `Retry-After` says when to retry.",
  },
  "503": {
    description:
      "Herald cannot reach its database for now (`service_unavailable`): the request may not have been done. Retry after `Retry-After`, a POST with the same Idempotency-Key; the SDK and the CLI do.",
  },
};

function operationId(summary: string): string {
  const words = summary
    .replace(/'s\b/g, "")
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w && !["a", "an", "the"].includes(w.toLowerCase()));
  return words
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join("");
}

function queryParameters(schema: Schema | undefined): Operation["parameters"] {
  const properties = (schema?.properties ?? {}) as Record<string, Schema>;
  return Object.entries(properties).map(([name, s]) => {
    const { description, ...rest } = s as Schema & { description?: string };
    return {
      name,
      in: "query" as const,
      required: false,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function operation(route: RouteSpec): Operation {
  const errors = Object.keys(errorResponses).filter((status) => {
    if (status === "422") return route.path === "/v3/events" && route.method === "post";
    if (status === "409") return route.method === "post";
    if (status === "413" || status === "415") return route.method === "post";
    if (status === "429" || status === "403") return route.auth === "account";
    return true;
  });
  return {
    operationId: operationId(route.summary),
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: route.auth === "none" ? [] : [{ [route.auth === "admin" ? "adminToken" : "apiKey"]: [] }],
    ...(route.auth === "account" ? { "x-herald-scope": route.scope } : {}),
    ...(route.audit ? { "x-herald-audit": route.audit } : {}),
    parameters: [
      ...Object.entries(route.params ?? {}).map(([name, description]) => ({
        name,
        in: "path" as const,
        required: true,
        description,
        schema: { type: "string" },
      })),
      ...queryParameters(route.query),
      ...Object.entries(route.headers ?? {}).map(([name, description]) => ({
        name,
        in: "header" as const,
        required: false,
        description,
        schema: { type: "string" },
      })),
      ...(route.method === "post" && route.auth === "account"
        ? [
            {
              name: "Idempotency-Key",
              in: "header" as const,
              required: false,
              description:
                "The same key with the same request within 24 hours returns the first response again.",
              schema: { type: "string", maxLength: 255 },
            },
          ]
        : []),
    ],
    ...(route.method === "post"
      ? {
          requestBody: {
            required: Array.isArray(route.body?.required) && (route.body.required as string[]).length > 0,
            content: {
              "application/json": { schema: route.body ?? { type: "object", additionalProperties: false } },
              "application/x-www-form-urlencoded": {
                schema: route.body ?? { type: "object", additionalProperties: false },
              },
            },
          },
        }
      : {}),
    responses: {
      [String(route.response.status)]: {
        description: route.response.description,
        content: { "application/json": { schema: route.response.schema } },
      },
      ...Object.fromEntries(
        errors.map((status) => [status, { $ref: `#/components/responses/Error${status}` }]),
      ),
    },
  };
}

/**
 * `publicUrl`: the gateway's address as its clients reach it (PUBLIC_URL), the document's one
 * server.
 */
export function buildOpenApi(
  routes: RouteSpec[],
  schemas: Record<string, Schema>,
  publicUrl: string,
): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method] = operation(route);
  }
  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({ name, description: TAGS[name] }));
  return {
    openapi: "3.1.0",
    info: {
      title: "Herald API",
      version: "v3",
      description:
        "Herald delivers your product's events, signed, to the endpoints your customers register, retries what fails, and shows what happened. Every `/v3` call carries `Authorization: Bearer <API_KEY>`. Bodies are JSON or form-encoded with the same meaning.",
    },
    servers: [{ url: publicUrl, description: "This installation of Herald." }],
    paths,
    webhooks: operationalWebhooks(),
    tags,
    components: {
      schemas: { ...schemas, Error: errorSchema },
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "An account's API key (`hk_…`)." },
        adminToken: { type: "http", scheme: "bearer", description: "The operator token set in ADMIN_TOKEN." },
        webhookSignature: {
          type: "apiKey",
          in: "header",
          name: "webhook-signature",
          description:
            "How your endpoint knows a webhook is Herald's: the Standard Webhooks signature, `v1,` and the base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body` under the endpoint's secret. Verify it with any Standard Webhooks library, or the SDK's `verifyWebhook`.",
        },
      },
      responses: Object.fromEntries(
        Object.entries(errorResponses).map(([status, r]) => [
          `Error${status}`,
          {
            description: r.description,
            content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
          },
        ]),
      ),
    },
  };
}
