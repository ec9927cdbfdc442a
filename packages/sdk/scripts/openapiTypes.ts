import type { OpenApiDocument } from "../../../services/api-gateway/src/openapi/document.ts";

/**
 * TypeScript types from the gateway's OpenAPI document: one type per component schema, and per
 * operation its path parameters, query, body and success response, plus a table of each
 * operation's method and path for the client to call. Only the JSON Schema the document uses is
 * understood; any other structural keyword stops the generator rather than typing it wrongly.
 */
type Schema = Record<string, unknown>;

/** Keywords that constrain values but not their TypeScript type. */
const ANNOTATIONS = new Set([
  "description",
  "examples",
  "default",
  "format",
  "title",
  "deprecated",
  "readOnly",
  "writeOnly",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
]);
const STRUCTURAL = new Set([
  "$ref",
  "type",
  "const",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "oneOf",
  "allOf",
]);

/** `Error` would shadow the global class wherever it is imported. */
const RENAMED: Record<string, string> = { Error: "ErrorBody" };

export function typeNameOf(component: string): string {
  return RENAMED[component] ?? component;
}

function refName(ref: string): string {
  const prefix = "#/components/schemas/";
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`);
  return typeNameOf(ref.slice(prefix.length));
}

const literal = (value: unknown): string => JSON.stringify(value);
const propertyKey = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name));
const union = (types: string[]): string => [...new Set(types)].join(" | ");
const arrayOf = (item: string): string => (/^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`);

function checkKeywords(schema: Schema): void {
  for (const key of Object.keys(schema)) {
    if (!ANNOTATIONS.has(key) && !STRUCTURAL.has(key))
      throw new Error(
        `unsupported JSON Schema keyword "${key}": extend packages/sdk/scripts/openapiTypes.ts`,
      );
  }
}

/** A JSDoc block from a schema's description and default, or nothing. */
function comment(schema: Schema, indent: string): string {
  const lines: string[] = [];
  if (typeof schema.description === "string") lines.push(...schema.description.split("\n"));
  if ("default" in schema) lines.push(`@default ${literal(schema.default)}`);
  if (lines.length === 0) return "";
  const safe = lines.map((l) => l.replaceAll("*/", "*\\/"));
  if (safe.length === 1) return `${indent}/** ${safe[0]} */\n`;
  return `${indent}/**\n${safe.map((l) => `${indent} * ${l}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

function objectType(schema: Schema, indent: string): string {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
  const required = new Set((schema.required ?? []) as string[]);
  const extra = schema.additionalProperties;
  const values = extra && typeof extra === "object" ? tsType(extra as Schema, indent) : "unknown";
  if (properties.length === 0) return extra === false ? "Record<string, never>" : `Record<string, ${values}>`;
  const inner = `${indent}  `;
  const lines = properties.map(
    ([name, s]) =>
      `${comment(s, inner)}${inner}${propertyKey(name)}${required.has(name) ? "" : "?"}: ${tsType(s, inner)};`,
  );
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: ${values};`);
  return `{\n${lines.join("\n")}\n${indent}}`;
}

function oneType(type: unknown, schema: Schema, indent: string): string {
  switch (type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return arrayOf(schema.items ? tsType(schema.items as Schema, indent) : "unknown");
    case "object":
      return objectType(schema, indent);
    default:
      throw new Error(`unsupported JSON Schema type ${literal(type)}`);
  }
}

/** The TypeScript type of a schema, its nested lines indented from `indent`. */
export function tsType(schema: Schema, indent = ""): string {
  checkKeywords(schema);
  if (typeof schema.$ref === "string") return refName(schema.$ref);
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options)) return union(options.map((s: Schema) => tsType(s, indent)));
  }
  if (Array.isArray(schema.allOf))
    return schema.allOf.map((s: Schema) => `(${tsType(s, indent)})`).join(" & ");
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length === 0) return schema.properties ? objectType(schema, indent) : "unknown";
  return union(types.map((t) => oneType(t, schema, indent)));
}

type Operation = OpenApiDocument["paths"][string][string];

function parametersType(operation: Operation, where: "path" | "query", indent: string): string {
  const parameters = operation.parameters.filter((p) => p.in === where);
  if (parameters.length === 0) return "Record<string, never>";
  const inner = `${indent}  `;
  const lines = parameters.map(
    (p) =>
      `${comment({ ...p.schema, description: p.description }, inner)}${inner}${propertyKey(p.name)}${p.required ? "" : "?"}: ${tsType(p.schema, inner)};`,
  );
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** The schema of the success response: the lowest 1xx or 2xx (101 for a WebSocket). */
function successSchema(operation: Operation): Schema {
  const status = Object.keys(operation.responses)
    .filter((s) => /^[12]\d\d$/.test(s))
    .sort()[0];
  const response = status
    ? (operation.responses[status] as { content?: Record<string, { schema: Schema }> })
    : null;
  const schema = response?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`${operation.operationId} has no JSON success response`);
  return schema;
}

function operationType(method: string, path: string, operation: Operation): string {
  const body = operation.requestBody?.content["application/json"]?.schema;
  const indent = "    ";
  return [
    `  /** ${operation.summary}: \`${method.toUpperCase()} ${path}\`${operation["x-herald-scope"] ? ` (scope \`${operation["x-herald-scope"]}\`)` : ""} */`,
    `  ${operation.operationId}: {`,
    `    params: ${parametersType(operation, "path", indent)};`,
    `    query: ${parametersType(operation, "query", indent)};`,
    `    body: ${body ? tsType(body, indent) : "undefined"};`,
    `    response: ${tsType(successSchema(operation), indent)};`,
    "  };",
  ].join("\n");
}

const HEADER = `// Generated by packages/sdk/scripts/generate.ts from the OpenAPI document the gateway serves
// (GET /v3/openapi.json). Do not edit: change the gateway's routes or schemas, then run
// \`pnpm --filter @herald/sdk generate\`. test/sdk/generated.test.ts fails while this file differs
// from what the current document generates.
`;

type Webhook = {
  post?: { description?: string; requestBody?: { content: Record<string, { schema: Schema }> } };
};

/** The document's `webhooks`, what Herald itself POSTs (the operational webhooks): each payload by its type. */
function webhookTypes(webhooks: Record<string, Webhook>): string[] {
  const entries = Object.entries(webhooks).map(([name, hook]) => {
    const schema = hook.post?.requestBody?.content["application/json"]?.schema;
    if (!schema) throw new Error(`the webhook ${name} has no JSON body`);
    return `${comment({ description: hook.post?.description }, "  ")}  ${propertyKey(name)}: ${tsType(schema, "  ")};`;
  });
  if (entries.length === 0) return [];
  return [
    "/** Herald's operational webhooks, each payload by its type: `verifyWebhook<OperationalWebhookPayload>(…)`. */",
    "export type OperationalWebhookPayloads = {",
    ...entries,
    "};\n",
    "export type OperationalWebhookPayload = OperationalWebhookPayloads[keyof OperationalWebhookPayloads];\n",
  ];
}

/** `, scope: "…"` for an operation of an account's API, from its `x-herald-scope`. */
function scopeField(operation: { "x-herald-scope"?: string }): string {
  const scope = operation["x-herald-scope"];
  return scope ? `, scope: "${scope}"` : "";
}

export function typesFromOpenApi(doc: OpenApiDocument): string {
  const components = Object.entries(doc.components.schemas).map(
    ([name, schema]) => `${comment(schema, "")}export type ${typeNameOf(name)} = ${tsType(schema)};\n`,
  );
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method, path, operation })),
  );
  const ids = operations.map((o) => o.operation.operationId);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) throw new Error(`two operations are named ${duplicate}`);
  const table = operations.map(
    ({ method, path, operation }) =>
      `  ${operation.operationId}: { method: "${method.toUpperCase()}", path: "${path}"${scopeField(operation)} },`,
  );
  return [
    HEADER,
    components.join("\n"),
    "/** Each operation of the API by its operationId: path parameters, query, JSON body and success response. */",
    "export type Operations = {",
    operations.map((o) => operationType(o.method, o.path, o.operation)).join("\n"),
    "};\n",
    "export type OperationId = keyof Operations;\n",
    ...webhookTypes((doc as { webhooks?: Record<string, Webhook> }).webhooks ?? {}),
    "/**",
    " * The method and path of each operation, and the scope an API key needs for it (`*` covers",
    " * every scope, a `:write` scope its `:read`; `any`: every key may). Operator and browser routes have none.",
    " */",
    "export const operations = {",
    ...table,
    `} as const satisfies Record<OperationId, { method: "GET" | "POST" | "DELETE"; path: string; scope?: string }>;`,
    "",
  ].join("\n");
}
