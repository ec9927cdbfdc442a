import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { openRelayInbox, type RelayedRequest } from "@herald/broker";
import { type WebSocket, WebSocketServer } from "ws";
import type { Deps } from "../context.ts";
import { authenticateKey } from "../http/auth.ts";
import { ApiError, internal } from "../http/errors.ts";
import { deleteEndpoint } from "../resources/endpoints.ts";
import { createListenEndpoint, LEASE_MS, renewLease } from "./endpoint.ts";
import { type ClientFrame, parseClientFrame, RESPONSE_BODY_MAX } from "./frames.ts";

/**
 * `herald listen`: a WebSocket at `GET /v3/listen?app=…[&event_types=a,b]`. Opening it makes a
 * temporary endpoint of the app whose URL is `herald-listen://<its id>`; deliveries to it come
 * here through the listen relay (the broker's relay.ts) instead of over HTTP, and go down the
 * socket; the CLI forwards each to its local server and sends back the answer, which becomes the
 * attempt's response. The gateway never calls a URL itself. Closing the socket deletes the
 * endpoint; should this gateway die first, the endpoint's lease runs out and the dispatcher
 * deletes it.
 *
 * Frames are JSON text (frames.ts): down, `ready` then one `request` per attempt; up, one
 * `response` per request.
 */
export const LISTEN_PATH = "/v3/listen";
const PING_MS = 20_000;
/** Sockets one gateway holds at most: each is an AMQP channel on its one connection (2047 at most). */
const MAX_SOCKETS = 1000;
/** Bytes queued to a client that does not read, at most; past that it is closed. */
const BUFFERED_MAX = 8 * 1024 * 1024;

export type ListenSockets = { close(): Promise<void> };

function refuse(socket: Duplex, error: ApiError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${error.status === 401 ? "Unauthorized" : "Error"}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export function attachListen(server: Server, deps: Deps): ListenSockets {
  const wss = new WebSocketServer({ noServer: true, maxPayload: RESPONSE_BODY_MAX * 2 });
  const open = new Set<Promise<void>>();

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node stops watching the socket once it emits `upgrade`: a reset from here on must not throw.
    socket.on("error", () => socket.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://gateway");
    } catch {
      return refuse(
        socket,
        new ApiError(400, "invalid_request_error", "parameter_invalid", "Malformed URL."),
      );
    }
    if (url.pathname !== LISTEN_PATH)
      return refuse(
        socket,
        new ApiError(404, "invalid_request_error", "resource_missing", "No such WebSocket."),
      );
    if (open.size >= MAX_SOCKETS)
      return refuse(
        socket,
        new ApiError(
          503,
          "api_error",
          "listen_unavailable",
          "This gateway holds all the listen sockets it may.",
        ),
      );
    void (async () => {
      const account = await authenticateKey(deps.prisma, req.headers.authorization, deps.caches.keys);
      const made = await createListenEndpoint(deps, account, url.searchParams);
      if (socket.destroyed) return void (await deleteEndpoint(deps, account.id, made.endpoint.id));
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session = serve(deps, ws, made, account.keyId).catch((err) =>
          deps.logger.warn({ err }, "listen socket failed"),
        );
        open.add(session);
        void session.finally(() => open.delete(session));
      });
    })().catch((err) => {
      if (!(err instanceof ApiError)) deps.logger.error({ err }, "listen upgrade failed");
      refuse(socket, err instanceof ApiError ? err : internal());
    });
  });

  return {
    async close() {
      for (const ws of wss.clients) ws.close(1001, "gateway stopping");
      await Promise.all([...open]);
      wss.close();
    },
  };
}

/** One socket's life: the relay inbox open, requests down, answers up, the endpoint deleted at the end. */
async function serve(
  deps: Deps,
  ws: WebSocket,
  made: Awaited<ReturnType<typeof createListenEndpoint>>,
  keyId: string,
): Promise<void> {
  const { endpoint, accountId } = made;
  const waiting = new Map<number, RelayedRequest>();
  let next = 1;
  let alive = true;
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  // A frame over the size limit, not UTF-8, or malformed: that socket ends, nothing else.
  ws.on("error", () => ws.terminate());
  try {
    const inbox = await openRelayInbox(
      deps.broker,
      endpoint.id,
      (request) => {
        if (ws.bufferedAmount > BUFFERED_MAX) return ws.close(1008, "not reading its requests");
        const id = next++;
        waiting.set(id, request);
        // Unanswered in time, the sender has given up (a timeout): forgotten here too.
        setTimeout(() => waiting.delete(id) && request.expire(), request.expiresInMs).unref();
        ws.send(JSON.stringify({ type: "request", id, headers: request.headers, body: request.body }));
      },
      () => ws.close(1011, "broker connection lost"),
    );
    ws.on("message", (data, isBinary) => {
      const frame: ClientFrame | null = isBinary ? null : parseClientFrame(String(data));
      if (!frame) return;
      const request = waiting.get(frame.id);
      if (!request) return;
      waiting.delete(frame.id);
      request.answer({ status: frame.status, headers: frame.headers, body: frame.body });
    });
    ws.on("pong", () => {
      alive = true;
    });
    ws.send(JSON.stringify({ type: "ready", endpoint: made.serialized, secret: made.secret }));
    const timer = setInterval(
      () => {
        if (!alive) return ws.terminate();
        alive = false;
        ws.ping();
        void renewLease(deps, endpoint.id, keyId).then(
          (live) => {
            if (!live) ws.close(1000, "endpoint deleted, or its API key revoked");
          },
          (err) => deps.logger.warn({ err, endpoint: endpoint.id }, "listen lease not renewed now"),
        );
      },
      Math.min(PING_MS, LEASE_MS / 3),
    );
    await closed;
    clearInterval(timer);
    await inbox.close();
  } finally {
    ws.terminate();
    await deleteEndpoint(deps, accountId, endpoint.id).catch((err) =>
      deps.logger.warn({ err, endpoint: endpoint.id }, "listen endpoint not deleted now; its lease ends it"),
    );
  }
}
