import { createConnection, type Socket } from "node:net";
import type { NatsConnection } from "nats";
import { NodeTransport } from "nats/lib/src/node_transport.js";
import { InboundLimit } from "./inbound.ts";

/**
 * What nats.js's Node transport does wrong for a sender that meets hostile or broken servers,
 * put right on its prototype. NodeTransport is the NATS transport's alone in the sender.
 */

type Patched = NodeTransport & { inbound?: InboundLimit };

// nats.js 2.29 dials with no hold on the socket until it connects, and nothing ends the dial
// when its own connect timeout or the attempt's deadline passes: a destination that drops SYNs
// would keep one socket per attempt until the kernel gives up, minutes later. Dialled here as
// nats.js dials, ended at the connect timeout (the attempt's: nats.ts passes it as `timeout`).
type Options = { timeout?: number };
NodeTransport.prototype.dial = function (
  this: Patched & { options?: Options },
  hp: { hostname: string; port: number },
) {
  return new Promise<Socket>((resolve, reject) => {
    let dialError: Error | undefined;
    const socket = createConnection(hp.port, hp.hostname, () => {
      clearTimeout(timer);
      socket.removeAllListeners();
      resolve(socket);
    });
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error("connect timeout"), { code: "ETIMEDOUT" })),
      this.options?.timeout ?? 20_000,
    );
    socket.on("error", (err) => {
      dialError = err;
    });
    socket.on("close", () => {
      clearTimeout(timer);
      socket.removeAllListeners();
      reject(dialError);
    });
    socket.setNoDelay(true);
  }) as never;
};

// nats.js 2.29 also leaves the socket open when the server accepted but sent no INFO before the
// connect timeout (its close() returns early while not `connected`): a destination that accepts
// and never answers would keep one socket per attempt for as long as it likes. Destroyed here.
const closeTransport = NodeTransport.prototype.close;
NodeTransport.prototype.close = function (this: Patched, err?: Error) {
  if (!this.connected) this.socket?.destroy();
  return closeTransport.call(this, err);
};

// What the server sends is counted (inbound.ts) from its first byte: nats.js gathers the INFO
// that opens a connection until its line ends, and later a MSG until its payload is all there,
// however large either says it is. The INFO gets 64 KiB: nats.js scans all it has so far on
// every chunk, so a line that never ends costs time as the square of its length.
const INFO_BYTES = 64 * 1024;
const peekInfo = NodeTransport.prototype.peekInfo;
NodeTransport.prototype.peekInfo = function (this: Patched) {
  const info = peekInfo.call(this);
  this.inbound = new InboundLimit("the server", { slackBytes: INFO_BYTES });
  this.inbound.watch(this.socket);
  return info;
};
const setupHandlers = NodeTransport.prototype.setupHandlers;
NodeTransport.prototype.setupHandlers = function (this: Patched) {
  setupHandlers.call(this);
  // peekInfo's listeners are gone (it removes them all), and TLS may have replaced the socket.
  this.inbound = new InboundLimit("the server");
  this.inbound.watch(this.socket);
};

/** The count of what the connection's server sent since it last answered. */
export function inboundOf(nc: NatsConnection): InboundLimit {
  const transport = (nc as unknown as { protocol: { transport: Patched } }).protocol.transport;
  transport.inbound ??= new InboundLimit("the server");
  return transport.inbound;
}
