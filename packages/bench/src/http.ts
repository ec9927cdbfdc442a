import { Agent, request } from "node:http";

export type Answer = { status: number; body: string };

/**
 * Sockets kept alive, at most `maxSockets`. With a `timeout` set, Node closes an idle socket a second
 * before the server's `Keep-Alive: timeout=5` would (without one it ignores the hint), so a socket
 * left idle between scenarios is not reused just as the server closes it (ECONNRESET).
 */
export function keepAliveAgent(maxSockets = 64): Agent {
  return new Agent({ keepAlive: true, maxSockets, timeout: 60_000 });
}

/** One POST of a JSON body; resolves with the status and body, rejects on a socket error or `signal`. */
export function postJson(
  agent: Agent,
  url: URL,
  body: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        signal,
        method: "POST",
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** `{"pad":"xxx…"}` of exactly `bytes` bytes (at least 10). */
export function paddedJson(bytes: number): string {
  return JSON.stringify({ pad: "x".repeat(Math.max(0, bytes - 10)) });
}
