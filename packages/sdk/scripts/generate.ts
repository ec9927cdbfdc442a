// `pnpm --filter @herald/sdk generate`: writes src/generated/openapi.ts from the OpenAPI document,
// built from the gateway's route table as GET /v3/openapi.json serves it (no server needed).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildOpenApi } from "../../../services/api-gateway/src/openapi/document.ts";
import { componentSchemas, routes } from "../../../services/api-gateway/src/routes.ts";
import { typesFromOpenApi } from "./openapiTypes.ts";

export const generatedPath = fileURLToPath(new URL("../src/generated/openapi.ts", import.meta.url));

export function openApiDocument() {
  // The server is the one thing an installation changes; the types do not use it.
  return buildOpenApi(routes, componentSchemas, "http://localhost:8080");
}

/** The generated file's text for the current document. */
export function generate(): string {
  return typesFromOpenApi(openApiDocument());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = generate();
  let before = "";
  try {
    before = readFileSync(generatedPath, "utf8");
  } catch {}
  writeFileSync(generatedPath, text);
  console.log(`${before === text ? "unchanged" : "wrote"} ${generatedPath}`);
}
