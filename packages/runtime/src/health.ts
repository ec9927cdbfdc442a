import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

/**
 * The health endpoints of a service without an HTTP API of its own (dispatcher, sender):
 * GET /healthz (the process is alive), GET /readyz (each dependency answers) and GET /metrics.
 */
export type ReadinessCheck = () => Promise<Record<string, boolean>>;

/** Also serves GET /metrics (Prometheus text) when given the registry. */
export async function startHealthServer(
  port: number,
  host: string,
  ready: ReadinessCheck,
  registry?: Registry,
): Promise<Server> {
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
    };
    if (req.method !== "GET") return send(405, { error: "method not allowed" });
    if (req.url === "/healthz") return send(200, { status: "ok" });
    if (req.url === "/readyz") {
      const checks = await ready().catch(() => ({ self: false }));
      const ok = Object.values(checks).every(Boolean);
      return send(ok ? 200 : 503, {
        status: ok ? "ready" : "unavailable",
        checks: Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, v ? "ok" : "unreachable"])),
      });
    }
    if (req.url === "/metrics" && registry) {
      res.writeHead(200, { "content-type": registry.contentType }).end(await registry.metrics());
      return;
    }
    send(404, { error: "not found" });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
