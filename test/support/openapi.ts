import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import { buildOpenApi } from "../../services/api-gateway/src/openapi/document.ts";
import { componentSchemas, routes } from "../../services/api-gateway/src/routes.ts";

/** Checks a response body against the OpenAPI document's schema: the docs must match the code. */
export const openapi = buildOpenApi(routes, componentSchemas, "http://localhost:8080");
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: "herald", components: openapi.components } as object);

export function expectMatches(body: unknown, schemaName: string): void {
  const validate = ajv.getSchema(`herald#/components/schemas/${schemaName}`);
  if (!validate) throw new Error(`no schema ${schemaName}`);
  const ok = validate(body);
  expect(ok ? [] : validate.errors, `${schemaName}: ${JSON.stringify(body)}`).toEqual([]);
}

export function expectList(
  body: { object: string; data: unknown[]; has_more: boolean },
  schemaName: string,
): void {
  expect(body.object).toBe("list");
  expect(typeof body.has_more).toBe("boolean");
  for (const item of body.data) expectMatches(item, schemaName);
}
