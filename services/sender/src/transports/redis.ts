import { isIP } from "node:net";
import type { RedisTarget } from "@herald/contracts/destinations";
import { Redis, ReplyError } from "ioredis";
import { InboundLimit, messageBytes } from "./inbound.ts";
import { ConnectionPool, connectionKey, untilAborted } from "./pool.ts";
import { guardReplies } from "./redisReplies.ts";
import {
  type Message,
  type Receipt,
  type SendContext,
  scrub,
  type Transport,
  TransportError,
} from "./types.ts";

/**
 * Redis Streams (`redis://`, `rediss://`): each message is one XADD entry, acknowledged by the
 * entry id the server assigns. The entry's fields are the headers, names lower-cased as an HTTP
 * receiver sees them (`webhook-id` = the event id, `webhook-timestamp`, `webhook-signature`,
 * `content-type`, the endpoint's own), then `body`, the JSON body byte for byte. A header named
 * `body` is left out, so `body` is the one field of that name.
 */
export function createRedisTransport(options: { maxConnections?: number } = {}): Transport<RedisTarget> {
  const pool = new ConnectionPool<Redis>(options.maxConnections ?? 64, (client) => client.disconnect());

  async function send(target: RedisTarget, message: Message, context: SendContext): Promise<Receipt> {
    const key = connectionKey(
      ["redis", target.tls, target.host, target.port, target.db],
      context.credentials,
    );
    const where = `Redis at ${target.host}:${target.port}`;
    const opening = () => open(target, context, where, (ended) => pool.drop(key, ended));
    const client = await pool.acquire(key, opening, context.signal, where);
    const args: string[] = target.maxlen === null ? [] : ["MAXLEN", "~", String(target.maxlen)];
    args.push("*", ...fields(message));
    const inbound = limits.get(client);
    const settle = inbound?.sending(messageBytes(message));
    try {
      const id = await untilAborted(client.xadd(target.stream, ...args), context.signal, where);
      settle?.(true);
      const db = target.db === 0 ? "" : ` in database ${target.db}`;
      return { detail: `stream ${target.stream}${db}, entry ${id}` };
    } catch (err) {
      settle?.(err instanceof ReplyError);
      // A refusal leaves the connection as good as it was; anything else (a timeout included: the
      // connection may be half open) ends it. An XADD that timed out may still have been added:
      // a retry then adds a second entry with the same `webhook-id`, for the consumer to skip.
      if (!(err instanceof ReplyError)) pool.drop(key, client);
      throw inbound?.violation ?? failure(err, context.credentials);
    }
  }

  return { type: "redis", send, close: () => pool.close() };
}

/** Each open connection's count of what its server sent (inbound.ts). */
const limits = new WeakMap<Redis, InboundLimit>();

/** The entry's fields, name and value in turn: the headers, lower-cased, then `body`. */
function fields(message: Message): string[] {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(message.headers)) {
    if (name.toLowerCase() !== "body") headers.set(name.toLowerCase(), value);
  }
  return [...[...headers].flat(), "body", message.body];
}

/**
 * A connection to the address the guard resolved, ready for commands, opened within the opening
 * send's deadline. ioredis would reconnect on its own, forever, and queue commands meanwhile:
 * both are off, so a broken connection fails what is waiting on it, says so (`onEnd`: the pool
 * drops it) and the next send opens another.
 */
async function open(
  target: RedisTarget,
  context: SendContext,
  where: string,
  onEnd: (client: Redis) => void,
): Promise<Redis> {
  const address = await untilAborted(context.resolve(target.host), context.signal, where);
  const credentials = context.credentials;
  const client = new Redis({
    host: address,
    port: target.port,
    // An empty user name means the `default` user (AUTH with the password alone).
    ...(credentials ? { username: credentials.username || undefined, password: credentials.password } : {}),
    // The certificate is checked against the URL's host name, not the address connected to.
    ...(target.tls ? { tls: isIP(target.host) ? {} : { servername: target.host } } : {}),
    lazyConnect: true,
    retryStrategy: null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    // The signal ends the opening (below); ioredis's own 10 s default must not end it sooner.
    connectTimeout: context.timeoutMs,
    // RESP2: XADD needs nothing of RESP3, and every Redis speaks it without a HELLO first.
    protocol: 2,
    // No INFO before the first command: a user allowed only XADD on its stream may publish.
    enableReadyCheck: false,
    disableClientInfo: true,
  });
  // Why the connection failed: connect() itself only says "Connection is closed". The listener
  // stays for the client's life, so a later socket error is never an unhandled 'error'.
  let reason: unknown = null;
  client.on("error", (err: unknown) => {
    reason ??= err;
  });
  // The socket exists from ioredis's 'connect' (emitted before any reply can be read) on.
  const inbound = new InboundLimit(where);
  limits.set(client, inbound);
  guardReplies(client, inbound);
  client.once("connect", () => {
    if (client.stream) inbound.watch(client.stream);
  });
  try {
    await untilAborted(client.connect(), context.signal, where);
    // SELECT here rather than ioredis's `db`, which goes on in database 0 when SELECT fails.
    if (target.db !== 0) await untilAborted(client.select(target.db), context.signal, where);
    client.once("end", () => onEnd(client));
    return client;
  } catch (err) {
    client.disconnect();
    const cause = err instanceof TransportError || err instanceof ReplyError ? err : (reason ?? err);
    throw inbound.violation ?? failure(cause, credentials);
  }
}

/**
 * What a send throws: a Redis error reply as `rejected` (WRONGTYPE: the key holds no stream) or
 * `auth_error` (credentials refused or not allowed this), the server's words as its message, never
 * the command (AUTH's would hold the password), and the credentials taken out of the words (an
 * ACL error may name the user); other errors as they are, for errorKind.ts.
 */
function failure(err: unknown, credentials: SendContext["credentials"]): unknown {
  if (!(err instanceof ReplyError)) return err;
  const said = String((err as Error).message);
  const auth = /^(NOAUTH|WRONGPASS|NOPERM)\b/.test(said) || /^ERR invalid (username-)?password/.test(said);
  return new TransportError(auth ? "auth_error" : "rejected", scrub(said, credentials));
}
