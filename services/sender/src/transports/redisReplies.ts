import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import type { Redis } from "ioredis";
import type { InboundLimit } from "./inbound.ts";

/**
 * What a Redis destination may answer: the replies AUTH, SELECT and XADD get under RESP2, a
 * simple string (+), an error (-), an integer (:) or a bulk string ($). Nothing else reaches
 * ioredis's decoder. An array header alone makes it allocate what the server announces
 * (`*33554432\r\n`, 12 bytes, reserves 268 MB; nested, 220 bytes exhaust the heap), which no
 * count of bytes received can stop: the chunk holding anything else closes the connection
 * before the decoder sees it.
 */

type Scan = { state: "type" | "line" | "length" | "skip"; length: number; skip: number };

/** Reads `chunk` on from where the last one ended; throws at a reply of another type. */
export function scanReplies(scan: Scan, chunk: Buffer): void {
  for (let i = 0; i < chunk.length; i++) {
    const byte = chunk[i]!;
    switch (scan.state) {
      case "type":
        // + - :
        if (byte === 0x2b || byte === 0x2d || byte === 0x3a) scan.state = "line";
        // $: a bulk string, its length first.
        else if (byte === 0x24) {
          scan.state = "length";
          scan.length = 0;
        } else throw new Error(`a reply of type ${JSON.stringify(String.fromCharCode(byte))}`);
        break;
      case "line":
        if (byte === 0x0a) scan.state = "type";
        break;
      case "length":
        if (byte === 0x2d) scan.length = -1;
        else if (byte >= 0x30 && byte <= 0x39 && scan.length >= 0)
          scan.length = scan.length * 10 + (byte - 0x30);
        else if (byte === 0x0a) {
          // $-1 is a null; otherwise the string and its CRLF follow.
          if (scan.length < 0) scan.state = "type";
          else {
            scan.state = "skip";
            scan.skip = scan.length + 2;
          }
        }
        break;
      case "skip": {
        const n = Math.min(scan.skip, chunk.length - i);
        scan.skip -= n;
        i += n - 1;
        if (scan.skip === 0) scan.state = "type";
        break;
      }
    }
  }
}

export function newScan(): Scan {
  return { state: "type", length: 0, skip: 0 };
}

type Handler = new (redis: Redis & { stream: Duplex }, options: unknown) => object;

// ioredis makes a DataHandler for each connection, which prepends its decoder's 'data'
// listener to the socket. For the clients guarded here that listener is fed through the scan.
const dataHandler = createRequire(createRequire(import.meta.url).resolve("ioredis"))("./DataHandler.js") as {
  default: Handler;
};
const guarded = new WeakMap<Redis, InboundLimit>();
const Base = dataHandler.default;
dataHandler.default = class GuardedDataHandler extends Base {
  constructor(redis: Redis & { stream: Duplex }, options: unknown) {
    super(redis, options);
    const inbound = guarded.get(redis);
    if (!inbound) return;
    const stream = redis.stream;
    const feed = stream.listeners("data")[0] as (chunk: Buffer) => void;
    stream.removeListener("data", feed);
    const scan = newScan();
    stream.prependListener("data", (chunk: Buffer) => {
      try {
        scanReplies(scan, chunk);
      } catch (err) {
        stream.destroy(inbound.end(`sent ${(err as Error).message}, which no command of Herald's gets`));
        return;
      }
      feed.call(stream, chunk);
    });
  }
};

/** Feeds the client's replies through the scan from its connection on; a violation ends it through `inbound`. */
export function guardReplies(client: Redis, inbound: InboundLimit): void {
  guarded.set(client, inbound);
}
