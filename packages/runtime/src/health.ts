import { createServer, type Server } from "node:http";

/**
 * The health endpoints of a service without an HTTP API of its own (dispatcher, sender):
 * GET /healthz (the process is alive) and GET /readyz (each dependency answers).
 */
export type ReadinessCheck = () => Promise<Record<string, boolean>>;

export async function startHealthServer(port: number, host: string, ready: ReadinessCheck): Promise<Server> {
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
