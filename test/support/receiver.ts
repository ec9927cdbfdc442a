import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A local webhook receiver whose answers the test sets, recording every request it gets. */
export type Received = { path: string; headers: IncomingHttpHeaders; body: string; at: number };
export type Answer = {
  status?: number;
  headers?: Record<string, string>;
  /** Text, or bytes as they are (NUL, invalid UTF-8). */
  body?: string | Buffer;
  delayMs?: number;
};

export type Receiver = {
  url: string;
  requests: Received[];
  /** How to answer requests to `path` (default 200 "ok"); a function answers per request. */
  on(path: string, answer: Answer | ((req: Received, n: number) => Answer)): void;
  received(path: string): Received[];
  close(): Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  const answers = new Map<string, Answer | ((req: Received, n: number) => Answer)>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const got: Received = {
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      requests.push(got);
      const n = requests.filter((r) => r.path === path).length;
      const rule = answers.get(path);
      const answer = typeof rule === "function" ? rule(got, n) : (rule ?? {});
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      if (res.destroyed) return;
      res.writeHead(answer.status ?? 200, answer.headers ?? {}).end(answer.body ?? "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    on: (path, answer) => answers.set(path, answer),
    received: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
