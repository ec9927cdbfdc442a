import { randomBytes } from "node:crypto";
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from "node:net";
import { errorKind } from "../errorKind.ts";
import { signatureHeader } from "../sign.ts";
import { type Message, type SendContext, TransportError } from "./types.ts";

/**
 * What the destination transports' tests share: signed messages, send contexts, and TCP servers
 * of a test's own (hanging ones, and relays to the local brokers that count connections).
 */

/** A name for a test's own queue, subject, stream or key: `t_dest_` marks what a test may delete. */
export const unique = () => `t_dest_${randomBytes(6).toString("hex")}`;

export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

/**
 * Messages signed with one secret, their headers built as deliver.ts builds them: the endpoint's
 * custom headers (`headers`, else the signer's), then the Standard Webhooks ones; the body is the
 * payload as JSON.
 */
export function signer(options: { secret?: string; headers?: Record<string, string> } = {}) {
  const secret = options.secret ?? newSecret();
  const signed = (payload: unknown, headers: Record<string, string> = options.headers ?? {}): Message => {
    const eventId = `evt_${randomBytes(16).toString("hex")}`;
    const body = JSON.stringify(payload);
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      eventId,
      body,
      headers: {
        ...headers,
        "content-type": "application/json",
        "webhook-id": eventId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader([secret], eventId, timestamp, body),
      },
    };
  };
  return { secret, signed };
}

export type TestContext = SendContext & { resolved: string[]; controller: AbortController };

/**
 * Makes a send's context: the host resolves to 127.0.0.1 (the name itself resolves nowhere) and is
 * recorded in `resolved`. The attempt ends when the test aborts `controller`, or after 10 s so a
 * send that hangs fails rather than holding the file. `credentials` are what a file's sends carry
 * unless told otherwise; with `host`, resolving any other name throws, so every connection goes
 * where the target says.
 */
export function contexts(defaults: { credentials?: SendContext["credentials"]; host?: string } = {}) {
  return (overrides: Partial<SendContext> = {}): TestContext => {
    const controller = new AbortController();
    const resolved: string[] = [];
    return {
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(10_000)]),
      timeoutMs: 10_000,
      credentials: defaults.credentials ?? null,
      resolve: async (host) => {
        if (defaults.host !== undefined && host !== defaults.host)
          throw new Error(`resolved ${host}, not the target's host`);
        resolved.push(host);
        return "127.0.0.1";
      },
      ...overrides,
      resolved,
      controller,
    };
  };
}

/** A send's context without credentials. */
export const context = contexts();

/** The kind the attempt records for an error (publish.ts's rule). */
export function kindOf(err: unknown): string {
  return err instanceof TransportError ? err.kind : errorKind(err);
}

/** The error a send rejects with; a send that succeeds fails the test. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the send to fail");
}

/** Listens on an ephemeral port of 127.0.0.1; resolves to the port. */
export async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** Resolves once the socket has closed. */
export function closed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve) => socket.once("close", () => resolve()));
}

/** Resolves once something listens on the port of 127.0.0.1: a server the test started is up. */
export async function untilListening(port: number): Promise<void> {
  for (let tries = 0; ; tries++) {
    const up = await new Promise<boolean>((resolve) => {
      const probe = createConnection(port, "127.0.0.1", () => {
        probe.destroy();
        resolve(true);
      });
      probe.on("error", () => resolve(false));
    });
    if (up) return;
    if (tries === 200) throw new Error(`nothing listens on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A TCP server on 127.0.0.1 whose accepted sockets are kept, to count and to watch close. */
export async function tcpServer(onSocket: (socket: Socket) => void = () => {}) {
  const sockets: Socket[] = [];
  const arrivals: (() => void)[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
    onSocket(socket);
    for (const arrived of arrivals.splice(0)) arrived();
  });
  const port = await listen(server);
  return {
    server,
    port,
    sockets,
    /** Resolves once `n` connections have been accepted. */
    async connections(n: number): Promise<void> {
      while (sockets.length < n) await new Promise<void>((resolve) => arrivals.push(resolve));
    },
    /** The accepted connections still open. */
    open: () => sockets.filter((s) => !s.destroyed).length,
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A destination that accepts and never answers; it reads what comes, so it sees the other side close. */
export function hangingServer() {
  return tcpServer((socket) => socket.resume());
}

/**
 * A TCP relay to the local server on `upstreamPort` (a broker the machine runs), so a test can
 * count the connections a transport opens, and make those open now go silent (forward nothing
 * either way): a server that stopped answering on an open connection, the server itself untouched.
 */
export async function relay(upstreamPort: number) {
  const silenced = new Set<Socket>();
  let onSwallowed = () => {};
  const swallowed = new Promise<void>((resolve) => {
    onSwallowed = resolve;
  });
  const server = await tcpServer((client) => {
    const upstream = createConnection(upstreamPort, "127.0.0.1");
    client.on("data", (chunk) => {
      if (silenced.has(client)) onSwallowed();
      else upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (!silenced.has(client)) client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    upstream.on("error", () => {});
  });
  return {
    ...server,
    /** The connections open now go silent; later ones work. */
    silence: () => {
      for (const c of server.sockets) silenced.add(c);
    },
    /** Resolves once something sent on a silent connection was held back. */
    swallowed,
  };
}
