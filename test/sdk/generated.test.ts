import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generate, generatedPath, openApiDocument } from "../../packages/sdk/scripts/generate.ts";
import { tsType } from "../../packages/sdk/scripts/openapiTypes.ts";
import {
  Herald,
  sdkMethods,
  operations as table,
  uncoveredOperations,
  VERSION,
} from "../../packages/sdk/src/index.ts";

const doc = openApiDocument();
const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
);

describe("the SDK's generated types", () => {
  it("are what the gateway's current OpenAPI document generates", () => {
    // On failure: `pnpm --filter @herald/sdk generate`, then give any new operation a method.
    expect(readFileSync(generatedPath, "utf8") === generate(), "regenerate the SDK's types").toBe(true);
  });

  it("carry each operation's scope, as the document names it", () => {
    for (const { op } of operations) {
      const row = table[op.operationId as keyof typeof table] as { scope?: string };
      expect(row.scope, op.operationId).toBe(op["x-herald-scope"]);
    }
    expect(table.sendEvent.scope).toBe("events:write");
  });

  it("come from JSON Schema the generator understands, or it stops", () => {
    expect(tsType({ type: ["string", "null"] })).toBe("string | null");
    expect(tsType({ enum: ["a", null] })).toBe('"a" | null');
    expect(tsType({ type: "array", items: { $ref: "#/components/schemas/Error" } })).toBe("ErrorBody[]");
    expect(tsType({ type: "object", additionalProperties: { type: "string" } })).toBe(
      "Record<string, string>",
    );
    expect(tsType({ anyOf: [{ type: "string" }, { type: "integer" }] })).toBe("string | number");
    expect(tsType({})).toBe("unknown");
    expect(() => tsType({ type: "object", patternProperties: {} })).toThrow(/patternProperties/);
  });
});

describe("the SDK's methods", () => {
  it("cover every operation of the document, but the few left out on purpose", () => {
    const covered = new Set(Object.keys(sdkMethods));
    const left = new Set(Object.keys(uncoveredOperations));
    for (const { method, path, op } of operations) {
      expect(
        covered.has(op.operationId) || left.has(op.operationId),
        `${op.operationId} (${method} ${path}) has no SDK method: add one to packages/sdk/src/resources and operations.ts, or to uncoveredOperations with why`,
      ).toBe(true);
      expect(covered.has(op.operationId) && left.has(op.operationId), op.operationId).toBe(false);
    }
    const ids = new Set(operations.map((o) => o.op.operationId));
    for (const id of [...covered, ...left]) expect(ids, `${id} is no longer in the document`).toContain(id);
  });

  it("each call the operation they are named for, list methods page by its cursor", async () => {
    const calls: { method: string; path: string; query: string }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      calls.push({ method: init?.method ?? "GET", path: url.pathname, query: url.search });
      return Response.json({ object: "list", data: [], has_more: false });
    };
    const herald = new Herald({ apiKey: "hk_test", baseUrl: "http://sdk.test", fetch: recording });
    for (const { method, path, op } of operations) {
      const name = sdkMethods[op.operationId as keyof typeof sdkMethods];
      if (!name) continue;
      const [group, fn] = name.split(".") as [string, string];
      const resource = (herald as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>)[
        group
      ];
      expect(typeof resource?.[fn], name).toBe("function");
      const pathParams = op.parameters.filter((p) => p.in === "path").map((p) => `${p.name}-1`);
      const result = resource![fn]!(...pathParams);
      const paged = op.parameters.some((p) => p.name === "starting_after");
      if (paged) {
        const iterator = result as { firstPage(): Promise<unknown>; [Symbol.asyncIterator]: unknown };
        expect(typeof iterator[Symbol.asyncIterator], `${name} is an auto-paging iterator`).toBe("function");
        await iterator.firstPage();
      } else await result;
      const expected = path.replace(/\{(\w+)\}/g, (_, p: string) => `${p}-1`);
      expect(calls.at(-1), name).toMatchObject({ method, path: expected });
    }
    expect(calls).toHaveLength(Object.keys(sdkMethods).length);
  });

  it("are the ones the README's table names", () => {
    const readme = readFileSync(new URL("../../packages/sdk/README.md", import.meta.url), "utf8");
    for (const [id, name] of Object.entries(sdkMethods))
      expect(readme, `README row for ${id}`).toMatch(new RegExp(`\`${id}\`\\s*\\|\\s*\`herald\\.${name}\\(`));
  });

  it("send the package's version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../packages/sdk/package.json", import.meta.url), "utf8"));
    expect(VERSION).toBe(pkg.version);
  });
});
