import WebSocket from "ws";

/**
 * A `herald listen` client for tests: the gateway's WebSocket at `<base>/v3/listen?<query>`,
 * every frame kept as it came (with its size), and when and how the gateway closed it.
 */
export type ListenFrame = {
  type: string;
  id?: number;
  /** The frame's size as it came down, bytes, and when it came (ms since the epoch). */
  bytes: number;
  at: number;
  // biome-ignore lint/suspicious/noExplicitAny: frames are read loosely and asserted
  [field: string]: any;
};

export type ListenClient = {
  ws: WebSocket;
  ready: ListenFrame;
  frames: ListenFrame[];
  /** Set when the socket closed: the time and the code. */
  closed: { at: number; code: number } | null;
  /** Answers a request frame as the local server would. */
  answer(id: number, status: number, body?: string): void;
};

/** A refused upgrade: its status and the API error it answered. */
// biome-ignore lint/suspicious/noExplicitAny: the error body is asserted loosely
export type ListenRefusal = Error & { status: number; body: any };

export function openListen(base: string, query: string, key: string): Promise<ListenClient> {
  const ws = new WebSocket(`${base.replace("http", "ws")}/v3/listen?${query}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const frames: ListenFrame[] = [];
  const client = { ws, frames, closed: null } as unknown as ListenClient;
  client.answer = (id, status, body = "") => ws.send(JSON.stringify({ type: "response", id, status, body }));
  return new Promise((resolve, reject) => {
    ws.on("close", (code) => {
      client.closed = { at: Date.now(), code };
      if (!client.ready) reject(Object.assign(new Error(`closed before ready (${code})`), { status: 0 }));
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () =>
        reject(
          Object.assign(new Error(`refused: ${body}`), { status: res.statusCode, body: JSON.parse(body) }),
        ),
      );
    });
    ws.once("error", reject);
    ws.on("message", (data: Buffer) => {
      const frame = { ...JSON.parse(String(data)), bytes: data.length, at: Date.now() } as ListenFrame;
      frames.push(frame);
      if (frame.type === "ready") {
        client.ready = frame;
        resolve(client);
      }
    });
  });
}

/** Opens a socket, waiting out the account's opening rate (`429`) rather than failing on it. */
export async function openListenPatiently(base: string, query: string, key: string): Promise<ListenClient> {
  for (let tries = 0; ; tries++) {
    try {
      return await openListen(base, query, key);
    } catch (err) {
      if ((err as ListenRefusal).status !== 429 || tries > 50) throw err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/** The requests a socket was sent. */
export const requestsOf = (client: ListenClient) => client.frames.filter((f) => f.type === "request");
