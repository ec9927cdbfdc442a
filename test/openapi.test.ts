import Ajv2020 from "ajv/dist/2020.js";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "./support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

type Layer = { route?: { path: string; methods: Record<string, boolean> } };

/** Every method+path Express actually serves, read from its router. */
function servedRoutes(app: TestGateway["gateway"]["app"]): string[] {
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  return stack.flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods).map(
          (m) => `${m.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, "{$1}")}`,
        )
      : [],
  );
}

describe("the API reference", () => {
  it("documents every route the gateway serves under /v3 and /admin", async () => {
    const doc = (await gw.request("GET", "/v3/openapi.json", { key: null })).body;
    const documented = new Set(
      Object.entries(doc.paths as Record<string, object>).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    const served = servedRoutes(gw.gateway.app).filter(
      (r) => / \/(v3|admin)\//.test(r) && !r.endsWith("/v3/openapi.json"),
    );
    expect(served.length).toBeGreaterThan(25);
    for (const route of served) expect(documented, route).toContain(route);
    for (const seed of [
      "GET /v3/events/{id}",
      "POST /v3/apps",
      "POST /v3/event-types",
      "DELETE /v3/endpoints/{id}",
      "GET /v3/attempts",
      "POST /v3/endpoints/{id}/replay",
    ]) {
      expect(documented, seed).toContain(seed);
    }
  });

  it("is an OpenAPI 3.1 document whose schemas compile and whose refs resolve", async () => {
    const doc = (await gw.request("GET", "/v3/openapi.json", { key: null })).body;
    expect(doc.openapi).toBe("3.1.0");
    const ajv = new Ajv2020.default({ strict: false });
    ajv.addSchema({ $id: "doc", components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).toBeTypeOf("function");
    }
    const refs = JSON.stringify(doc.paths).match(/#\/components\/(schemas|responses)\/\w+/g) ?? [];
    for (const ref of new Set(refs)) {
      const [, kind, name] = ref.split("/").slice(1);
      expect(doc.components[kind!][name!], ref).toBeDefined();
    }
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      (ops) => Object.values(ops).map((o) => o.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("serves a readable reference page at /docs with no outside resources", async () => {
    const res = await fetch(`${gw.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("/v3/endpoints/{id}/replay");
    expect(html).toContain("Idempotency-Key");
    // It sends readers to the guide for the concepts (test/docs.test.ts checks the file exists).
    expect(html).toContain("<code>docs/api-guide.md</code>");
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:\/\//);
    // A strict policy: no script at all, nothing from elsewhere, no framing, no referrer.
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("content-security-policy")).not.toContain("script-src");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
