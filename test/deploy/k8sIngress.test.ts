import { describe, expect, it } from "vitest";
import { routes } from "../../services/api-gateway/src/routes.ts";
import { find, type K8sObject, render, targets } from "../support/k8s.ts";

/**
 * What the Ingress lets in from outside the cluster, evaluated as the Ingress API defines its
 * paths (Exact: the whole path; Prefix: whole `/`-separated elements): the gateway's public
 * surface, and not its metrics, health checks or admin routes.
 */
type IngressPath = {
  path: string;
  pathType: string;
  backend: { service: { name: string; port: { name: string } } };
};

function pathMatches({ path, pathType }: IngressPath, requested: string): boolean {
  if (pathType === "Exact") return requested === path;
  if (pathType !== "Prefix") throw new Error(`pathType ${pathType} is not portable across controllers`);
  const elements = (p: string) => p.split("/").filter(Boolean);
  const prefix = elements(path);
  const asked = elements(requested);
  return prefix.every((element, i) => asked[i] === element);
}

/** The backend a request for `path` on `host` reaches, or null when the Ingress does not route it. */
function routeOf(ingress: K8sObject, host: string, path: string): string | null {
  const rule = ingress.spec.rules.find((r: { host?: string }) => r.host === host);
  const matching = ((rule?.http.paths ?? []) as IngressPath[]).filter((p) => pathMatches(p, path));
  if (!matching.length) return null;
  // The longest match wins, Exact before Prefix: all of Herald's go to the same place anyway.
  const { service } = matching[0]!.backend;
  return `${service.name}:${service.port.name}`;
}

const publicPaths = [
  "/",
  "/v3/events",
  "/v3/openapi.json",
  "/session",
  "/portal",
  "/portal/endpoints/ep_1",
  "/dashboard",
  "/dashboard/apps/app_1",
  "/ui/assets/index-abc123.js",
  "/docs",
];
const internalPaths = [
  "/metrics",
  "/healthz",
  "/readyz",
  "/admin",
  "/admin/accounts",
  "/v3x",
  "/dashboardx",
  "/anything-else",
];

describe.each(Object.keys(targets) as (keyof typeof targets)[])("the Ingress of %s", (target) => {
  const ingress = find(render(target), "Ingress", "herald-api-gateway");
  const [rule] = ingress.spec.rules;
  const host: string = rule.host;

  it("routes the API, sessions, the portal, the dashboard, their assets and the docs to the gateway", () => {
    for (const path of publicPaths)
      expect(routeOf(ingress, host, path), path).toBe("herald-api-gateway:http");
  });

  it("does not route /metrics, the health checks or /admin, nor any other path", () => {
    for (const path of internalPaths) expect(routeOf(ingress, host, path), path).toBeNull();
  });

  it("routes every API and session route the gateway serves, and none of its admin routes", () => {
    for (const route of routes) {
      const path = route.path.replace(/\{[^}]+\}/g, "x1");
      const routed = routeOf(ingress, host, path);
      if (route.path.startsWith("/admin")) expect(routed, route.path).toBeNull();
      else expect(routed, route.path).toBe("herald-api-gateway:http");
    }
  });

  it("has one rule, for the host PUBLIC_URL names", () => {
    expect(ingress.spec.rules).toHaveLength(1);
    const [config] = render(target).filter((o) => o.kind === "ConfigMap");
    expect(new URL(config!.data.PUBLIC_URL).host).toBe(host);
  });
});

describe("the path matching", () => {
  const ingress = {
    spec: {
      rules: [
        {
          host: "h",
          http: {
            paths: [
              { path: "/", pathType: "Exact", backend: { service: { name: "s", port: { name: "http" } } } },
              {
                path: "/v3",
                pathType: "Prefix",
                backend: { service: { name: "s", port: { name: "http" } } },
              },
            ],
          },
        },
      ],
    },
  } as unknown as K8sObject;

  it("follows the Ingress API: Exact is the whole path, Prefix whole elements", () => {
    expect(routeOf(ingress, "h", "/")).toBe("s:http");
    expect(routeOf(ingress, "h", "/metrics")).toBeNull();
    expect(routeOf(ingress, "h", "/v3")).toBe("s:http");
    expect(routeOf(ingress, "h", "/v3/events")).toBe("s:http");
    expect(routeOf(ingress, "h", "/v3events")).toBeNull();
    expect(routeOf(ingress, "other", "/v3")).toBeNull();
  });

  it("treats a Prefix of / as every path", () => {
    const everything = structuredClone(ingress);
    everything.spec.rules[0].http.paths[0].pathType = "Prefix";
    expect(routeOf(everything, "h", "/metrics")).toBe("s:http");
  });
});
