import type { Ctx } from "../../context.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { schemaCheck, schemaRequester } from "./schemaCheck.ts";

/**
 * Checks a JSON Schema without saving anything: the dashboard's schema editor calls this as
 * the user types. The check is the one event types get, so a schema that passes here is
 * accepted by `POST /v3/event-types`.
 */
export const jsonSchemaSchemas: Record<string, Schema> = {
  SchemaValidation: {
    type: "object",
    required: ["object", "valid", "errors", "example"],
    properties: {
      object: { const: "schema_validation" },
      valid: { type: "boolean", description: "Whether an event type would accept this schema." },
      errors: {
        type: "array",
        description:
          "Each problem, where it is in the schema (a JSON Pointer, `/` for the whole). Empty when valid.",
        items: {
          type: "object",
          required: ["path", "message"],
          properties: {
            path: { type: "string", examples: ["/properties/amount/type"] },
            message: { type: "string" },
          },
        },
      },
      example: {
        description:
          "An example payload made from the schema, as event types show it (its own examples and defaults first); null when the schema is invalid.",
      },
    },
  },
};

export const jsonSchemaRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/json-schema/validate",
    auth: "account",
    scope: "event_types:read",
    oneApp: true,
    audit: false,
    tag: "Event types",
    summary: "Validate a JSON Schema",
    description:
      "Checks `schema` exactly as creating an event type does (the JSON Schema meta-schema, then compiling it) and stores nothing. An invalid schema is still a 200, with `valid: false` and its `errors`.",
    body: {
      type: "object",
      additionalProperties: false,
      required: ["schema"],
      properties: {
        schema: {
          description:
            "The JSON Schema to check: any JSON value (only an object can be valid). In a form body, a JSON string.",
        },
      },
    },
    formJson: ["schema"],
    response: {
      status: 200,
      schema: ref("SchemaValidation"),
      description: "Whether the schema is valid, its problems, and an example payload.",
    },
    async handler({ account, body, deps }: Ctx<object, object, { schema: unknown }>) {
      const { problems, example } = await schemaCheck(deps, schemaRequester(account), body.schema);
      const valid = problems.length === 0;
      return {
        body: {
          object: "schema_validation",
          valid,
          errors: problems,
          example: valid ? (example ?? null) : null,
        },
      };
    },
  },
];
