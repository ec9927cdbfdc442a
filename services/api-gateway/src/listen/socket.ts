import { type IncomingMessage, type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { openRelayInbox, type RelayedRequest } from "@herald/broker";
import { Counter, Gauge, type Registry } from "@herald/runtime";
import { type WebSocket, WebSocketServer } from "ws";
import { clientAddress } from "../audit/record.ts";
import type { Deps } from "../context.ts";
import { checkAccess } from "../http/access.ts";
import { authenticateKey } from "../http/auth.ts";
import { ApiError, internal } from "../http/errors.ts";
import { RateLimiter } from "../http/rateLimit.ts";
import { ByteBudget, HELD_PER_GATEWAY, HELD_PER_SOCKET, hold } from "./budget.ts";
import {
  createListenEndpoint,
  endListenEndpoint,
  LEASE_MS,
  LISTEN_SECRET_HEADER,
  renewLease,
} from "./endpoint.ts";
import { type ClientFrame, parseClientFrame, RESPONSE_BODY_MAX } from "./frames.ts";
import { LiveSockets } from "./liveness.ts";
import { listenRoutes } from "./route.ts";

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
 * `response` per request. Requests unanswered are held within budgets (budget.ts); a deleted
 * endpoint's socket is closed within a second (liveness.ts).
 */
export const LISTEN_PATH = "/v3/listen";
const PING_MS = 20_000;
/** Sockets one gateway holds at most: each is an AMQP channel on its one connection (2047 at most). */
const MAX_SOCKETS = 1000;
/** Sockets an account may open a second (bursts of twice that), on each gateway. */
const OPENS_PER_SECOND = 5;

export type ListenSockets = { close(): Promise<void> };

/** What ws's handshake checks, checked before anything is made: a request it would refuse makes no endpoint. */
function isHandshake(req: IncomingMessage): boolean {
  const key = req.headers["sec-websocket-key"];
  return (
    req.method === "GET" &&
    req.headers.upgrade?.toLowerCase() === "websocket" &&
    typeof key === "string" &&
    /^[+/0-9A-Za-z]{22}==$/.test(key) &&
    ["8", "13"].includes(String(req.headers["sec-websocket-version"]))
  );
}

function refuse(socket: Duplex, error: ApiError, refused: Counter<"status">): void {
  refused.inc({ status: error.status });
  if (socket.destroyed) return;
  const body = JSON.stringify(error.toBody());
  // Header values are the gateway's own (Retry-After), never a request's.
  const extra = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra.join("")}connection: close\r\n\r\n${body}`,
  );
}

/**
 * Serves `herald listen` sockets on `server`. Upgrade requests go around Express: they are
 * counted here (herald_listen_upgrades_total, herald_listen_sockets) and take a token from the
 * account's rate limiter like any API request, and one from a smaller bucket of their own.
 */
export function attachListen(
  server: Server,
  deps: Deps,
  { limiter, registry }: { limiter: RateLimiter; registry: Registry },
): ListenSockets {
  const wss = new WebSocketServer({ noServer: true, maxPayload: RESPONSE_BODY_MAX * 2 });
  const open = new Set<Promise<void>>();
  const upgrades = new Counter({
    name: "herald_listen_upgrades_total",
    help: "herald listen WebSocket requests, by status: 101 opened, else the error answered",
    labelNames: ["status"],
    registers: [registry],
  });
  new Gauge({
    name: "herald_listen_sockets",
    help: "herald listen sockets this gateway holds",
    registers: [registry],
    collect() {
      this.set(open.size);
    },
  });
  const gateway = new ByteBudget(HELD_PER_GATEWAY);
  new Gauge({
    name: "herald_listen_held_bytes",
    help: "Bytes of herald listen requests this gateway holds, not yet written or not yet answered",
    registers: [registry],
    collect() {
      this.set(gateway.bytes);
    },
  });
  const refused = new Counter({
    name: "herald_listen_requests_refused_total",
    help: "herald listen requests refused (their attempts failed as timeouts), by the budget that was full",
    labelNames: ["budget"],
    registers: [registry],
  });
  const shared: Shared = { gateway, live: new LiveSockets(deps), refused };
  const fail = (socket: Duplex, error: ApiError) => refuse(socket, error, upgrades);
  const opens = new RateLimiter(OPENS_PER_SECOND);

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node stops watching the socket once it emits `upgrade`: a reset from here on must not throw.
    socket.on("error", () => socket.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://gateway");
    } catch {
      return fail(socket, new ApiError(400, "invalid_request_error", "parameter_invalid", "Malformed URL."));
    }
    if (url.pathname !== LISTEN_PATH)
      return fail(
        socket,
        new ApiError(404, "invalid_request_error", "resource_missing", "No such WebSocket."),
      );
    if (!isHandshake(req))
      return fail(
        socket,
        new ApiError(
          400,
          "invalid_request_error",
          "upgrade_invalid",
          "Not a WebSocket handshake (RFC 6455).",
        ),
      );
    if (open.size >= MAX_SOCKETS)
      return fail(
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
      checkAccess(account, listenRoutes[0]!);
      limiter.take(account.id);
      // Each socket makes and deletes an endpoint, an AMQP queue and an outbox row: opening
      // them has a small budget of its own, whatever the account's request rate.
      opens.take(account.id);
      const chosen = req.headers[LISTEN_SECRET_HEADER];
      const source = { requestId: null, ip: clientAddress(req, deps.config.trustProxy) };
      const made = await createListenEndpoint(
        deps,
        account,
        url.searchParams,
        typeof chosen === "string" ? chosen : undefined,
        source,
      );
      const dropEndpoint = () => endListenEndpoint(deps, account, made.endpoint.id, source);
      if (socket.destroyed) return void (await dropEndpoint());
      // Should the handshake not complete (the client gone meanwhile), the endpoint goes now.
      let upgraded = false;
      socket.once("close", () => upgraded || void dropEndpoint());
      wss.handleUpgrade(req, socket, head, (ws) => {
        upgraded = true;
        upgrades.inc({ status: 101 });
        const session = serve(deps, shared, ws, made, account.keyId, dropEndpoint).catch((err) =>
          deps.logger.warn({ err }, "listen socket failed"),
        );
        open.add(session);
        void session.finally(() => open.delete(session));
      });
    })().catch((err) => {
      if (!(err instanceof ApiError)) deps.logger.error({ err }, "listen upgrade failed");
      fail(socket, err instanceof ApiError ? err : internal());
    });
  });

  return {
    async close() {
      shared.live.stop();
      for (const ws of wss.clients) ws.close(1001, "gateway stopping");
      await Promise.all([...open]);
      wss.close();
    },
  };
}

/** What the sockets of one gateway share. */
type Shared = { gateway: ByteBudget; live: LiveSockets; refused: Counter<"budget"> };

/**
 * A request the socket took, as long as it waits for its answer: how to answer it or let it
 * expire. Not its body, which went down the socket.
 */
type Waiting = { answer: RelayedRequest["answer"]; expire(): void };

/** One socket's budget, and how to give back what its requests hold should it close with some unsettled. */
type Held = { own: ByteBudget; releases: Set<() => void> };

/**
 * Sends `request` down the socket if both the socket's and the gateway's budgets have room for
 * it, else refuses it: its attempt fails at once, as a timeout. Its bytes stay held until it is
 * both written and settled (answered, or expired after its timeout).
 */
function handOver(
  ws: WebSocket,
  request: RelayedRequest,
  id: number,
  held: Held,
  shared: Shared,
): Waiting | null {
  const release = hold([held.own, shared.gateway], request.bytes);
  if (!release) {
    shared.refused.inc({ budget: held.own.fits(request.bytes) ? "gateway" : "socket" });
    request.refuse();
    return null;
  }
  held.releases.add(release);
  let pending = 2;
  const done = () => {
    if (--pending > 0) return;
    held.releases.delete(release);
    release();
  };
  const frame = { type: "request", id, headers: request.headers, body: request.body };
  // Written (or failed, the socket gone), ws calls back: the frame is no longer in memory here.
  ws.send(JSON.stringify({ ...frame, timeout_ms: request.expiresInMs }), done);
  const { answer, expire } = request;
  return {
    answer: (response) => {
      answer(response);
      done();
    },
    expire: () => {
      expire();
      done();
    },
  };
}

/** One socket's life: the relay inbox open, requests down, answers up, the endpoint deleted at the end. */
async function serve(
  deps: Deps,
  shared: Shared,
  ws: WebSocket,
  made: Awaited<ReturnType<typeof createListenEndpoint>>,
  keyId: string,
  /** Deletes the endpoint, with its audit record: the socket's last step. */
  dropEndpoint: () => Promise<void>,
): Promise<void> {
  const { endpoint } = made;
  const waiting = new Map<number, Waiting>();
  const held: Held = { own: new ByteBudget(HELD_PER_SOCKET, true), releases: new Set() };
  let next = 1;
  let alive = true;
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  // A frame over the size limit, not UTF-8, or malformed: that socket ends, nothing else.
  ws.on("error", () => ws.terminate());
  shared.live.add(endpoint.id, keyId, ws);
  try {
    const inbox = await openRelayInbox(
      deps.broker,
      endpoint.id,
      (request) => {
        const id = next++;
        const taken = handOver(ws, request, id, held, shared);
        if (!taken) return;
        waiting.set(id, taken);
        // Unanswered in time, the sender has given up (a timeout): forgotten here too.
        setTimeout(() => {
          waiting.get(id)?.expire();
          waiting.delete(id);
        }, request.expiresInMs).unref();
      },
      () => ws.close(1011, "broker connection lost"),
    );
    ws.on("message", (data, isBinary) => {
      const frame: ClientFrame | null = isBinary ? null : parseClientFrame(String(data));
      if (!frame) return;
      const taken = waiting.get(frame.id);
      if (!taken) return;
      waiting.delete(frame.id);
      taken.answer({ status: frame.status, headers: frame.headers, body: frame.body });
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
    shared.live.delete(endpoint.id);
    ws.terminate();
    // Whatever is still held (a write never called back) goes back with the socket.
    for (const release of held.releases) release();
    await dropEndpoint();
  }
}
