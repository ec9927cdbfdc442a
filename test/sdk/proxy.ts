import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server in front of a real gateway, for what a gateway will not do on demand: answer
 * a 503, or nothing at all. Each request is answered by `plan(n)` (n from 1): a canned reply,
 * "hang" (never answered), or "forward" to the target, whose answer is passed back with `addHeaders`.
 */
export type Canned = { status: number; body?: string; headers?: Record<string, string> };
export type Step = Canned | "hang" | "forward";
export type Proxied = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

export type LocalProxy = { url: string; requests: Proxied[]; close(): Promise<void> };

const HOP = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "content-encoding",
]);

export async function startProxy(
  target: string | null,
  plan: (n: number) => Step,
  addHeaders: Record<string, string> = {},
): Promise<LocalProxy> {
  const requests: Proxied[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const got = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(got);
      const step = plan(requests.length);
      if (step === "hang") return;
      if (step !== "forward") {
        res.writeHead(step.status, step.headers ?? {}).end(step.body ?? "");
        return;
      }
      if (!target) throw new Error("nothing to forward to");
      const headers = Object.entries(req.headers).flatMap(([k, v]) =>
        HOP.has(k) || v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v] as [string, string]],
      );
      const answer = await fetch(target + got.path, {
        method: got.method,
        headers,
        body: got.method === "GET" || got.method === "DELETE" ? undefined : got.body,
      });
      const back: Record<string, string> = { ...addHeaders };
      answer.headers.forEach((v, k) => {
        if (!HOP.has(k)) back[k] = v;
      });
      res.writeHead(answer.status, back).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
