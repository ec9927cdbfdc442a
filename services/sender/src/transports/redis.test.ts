import { randomBytes, randomUUID } from "node:crypto";
import { createConnection } from "node:net";
import { createSecureContext, createServer as createTlsServer } from "node:tls";
import type { RedisTarget } from "@herald/contracts/destinations";
import { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePki } from "../../../../test/support/pki.ts";
import { deadPort } from "../../../../test/support/ports.ts";
import { errorKind } from "../errorKind.ts";
import { configurePools } from "./pool.ts";
import { createRedisTransport } from "./redis.ts";
import { closed, contexts, hangingServer, listen, relay, signer, unique } from "./testSupport.ts";
import { TransportError } from "./types.ts";

/** Against the local Redis (127.0.0.1:6379): each test its own `t_dest_*` stream, deleted after. */
const REDIS_PORT = 6379;

let admin: Redis;
beforeAll(() => {
  // Every connection idle at once after its send: the bound closes the oldest (pool.test.ts has the rule).
  configurePools({ busyMs: 0 });
  admin = new Redis({ host: "127.0.0.1", port: REDIS_PORT, lazyConnect: true });
  return admin.connect();
});
afterAll(() => admin.disconnect());

/** The URL's host is a name only the test's resolver knows: every connection goes where it says. */
function target(stream: string, overrides: Partial<RedisTarget> = {}): RedisTarget {
  return {
    type: "redis",
    tls: false,
    host: "redis.test",
    port: REDIS_PORT,
    db: 0,
    stream,
    maxlen: null,
    ...overrides,
  };
}

/** Every connection goes where the target says: resolving any name but its host throws. */
const context = contexts({ host: "redis.test" });

/** Signed as deliver.ts signs an HTTP delivery; the body has characters beyond ASCII. */
const { secret: SECRET, signed } = signer({ headers: { "X-Tenant": "acme" } });
const message = () => signed({ type: "invoice.paid", data: { amount: 1200, note: "café ✓ 🚀" } });

/** The entries of a stream as an independent consumer reads them: id, and fields as raw bytes. */
async function entries(stream: string, db = 0): Promise<{ id: string; fields: Map<string, Buffer> }[]> {
  const reader = new Redis({ host: "127.0.0.1", port: REDIS_PORT, db, lazyConnect: true });
  await reader.connect();
  try {
    const raw = await reader.xrangeBuffer(stream, "-", "+");
    return raw.map(([id, flat]) => {
      const fields = new Map<string, Buffer>();
      for (let i = 0; i < flat.length; i += 2) fields.set(flat[i]!.toString(), flat[i + 1]!);
      return { id: id.toString(), fields };
    });
  } finally {
    reader.disconnect();
  }
}

describe("Redis Streams transport", () => {
  it("adds one entry a separate consumer reads: the body byte for byte, headers whose signature verifies", async () => {
    const stream = unique();
    const transport = createRedisTransport();
    const sent = message();
    try {
      const receipt = await transport.send(target(stream), sent, context());
      const [entry, ...more] = await entries(stream);
      expect(more).toHaveLength(0);
      expect(receipt.detail).toBe(`stream ${stream}, entry ${entry!.id}`);
      const body = entry!.fields.get("body")!;
      expect(body.equals(Buffer.from(sent.body, "utf8"))).toBe(true);
      const headers = Object.fromEntries(
        [...entry!.fields].filter(([name]) => name !== "body").map(([name, v]) => [name, v.toString()]),
      );
      expect(headers).toEqual({
        "x-tenant": "acme",
        "content-type": "application/json",
        "webhook-id": sent.eventId,
        "webhook-timestamp": sent.headers["webhook-timestamp"],
        "webhook-signature": sent.headers["webhook-signature"],
      });
      expect(new Webhook(SECRET).verify(body.toString("utf8"), headers)).toEqual(JSON.parse(sent.body));
      // The field names, in order: the headers, then the body, last.
      expect([...entry!.fields.keys()].at(-1)).toBe("body");
    } finally {
      await transport.close();
      await admin.del(stream);
    }
  });

  it("adds to the URL's database and trims the stream to about `maxlen` entries", async () => {
    const stream = unique();
    const transport = createRedisTransport();
    const db1 = new Redis({ host: "127.0.0.1", port: REDIS_PORT, db: 1, lazyConnect: true });
    await db1.connect();
    try {
      const inDb1 = await transport.send(target(stream, { db: 1 }), message(), context());
      expect(inDb1.detail).toMatch(new RegExp(`^stream ${stream} in database 1, entry \\d+-\\d+$`));
      expect(await admin.exists(stream)).toBe(0);
      expect(await db1.xlen(stream)).toBe(1);

      // MAXLEN ~ trims whole nodes of the stream (100 entries each by default), never below 10.
      const trimmed = target(stream, { maxlen: 10 });
      for (let i = 0; i < 300; i++) await transport.send(trimmed, message(), context());
      expect(await admin.xlen(stream)).toBeLessThan(300);
      expect(await admin.xlen(stream)).toBeGreaterThanOrEqual(10);
    } finally {
      await transport.close();
      await db1.del(stream);
      db1.disconnect();
      await admin.del(stream);
    }
  });

  it("is rejected with the server's words when the key holds another type, and the connection stays usable", async () => {
    const key = unique();
    const stream = unique();
    await admin.set(key, "not a stream");
    const transport = createRedisTransport();
    try {
      const refused = transport.send(target(key), message(), context());
      await expect(refused).rejects.toBeInstanceOf(TransportError);
      await expect(refused).rejects.toMatchObject({
        kind: "rejected",
        message: expect.stringMatching(/^WRONGTYPE/),
      });
      expect(await admin.get(key)).toBe("not a stream");
      await expect(transport.send(target(stream), message(), context())).resolves.toMatchObject({
        detail: expect.stringContaining(stream),
      });
    } finally {
      await transport.close();
      await admin.del(key, stream);
    }
  });

  it("fails as a connection error when the port is closed", async () => {
    const port = await deadPort();
    const transport = createRedisTransport();
    try {
      const err = await transport.send(target(unique(), { port }), message(), context()).catch((e) => e);
      expect(err).toMatchObject({ code: "ECONNREFUSED" });
      expect(errorKind(err)).toBe("connection_error");
    } finally {
      await transport.close();
    }
  });

  it("ends a send to a server that never answers with a timeout, drops that connection, and holds no one else up", async () => {
    const hanging = await hangingServer();
    const hangingPort = hanging.port;
    const stream = unique();
    const transport = createRedisTransport();
    try {
      const deadline = new AbortController();
      let settled = false;
      const stuck = transport.send(
        target(unique(), { port: hangingPort }),
        message(),
        context({ signal: deadline.signal }),
      );
      stuck.then(
        () => (settled = true),
        () => (settled = true),
      );
      await hanging.connections(1);
      // Another destination, while the first one hangs: answered, the hanging send still waiting.
      await expect(transport.send(target(stream), message(), context())).resolves.toBeDefined();
      expect(settled).toBe(false);

      deadline.abort();
      await expect(stuck).rejects.toBeInstanceOf(TransportError);
      await expect(stuck).rejects.toMatchObject({ kind: "timeout" });
      // The half-open connection is closed, and the next send opens another.
      await closed(hanging.sockets[0]!);
      const again = new AbortController();
      const next = transport.send(
        target(unique(), { port: hangingPort }),
        message(),
        context({ signal: again.signal }),
      );
      await expect.poll(() => hanging.sockets.length).toBe(2);
      again.abort();
      await expect(next).rejects.toMatchObject({ kind: "timeout" });
    } finally {
      await transport.close();
      await hanging.close();
      await admin.del(stream);
    }
  });

  it("ends the opening of a connection at the deadline when the server never answers AUTH", async () => {
    const hanging = await hangingServer();
    const hangingPort = hanging.port;
    const transport = createRedisTransport();
    try {
      const deadline = new AbortController();
      const stuck = transport.send(
        target(unique(), { port: hangingPort }),
        message(),
        context({ signal: deadline.signal, credentials: { username: "u", password: "p" } }),
      );
      await expect.poll(() => hanging.sockets.length).toBe(1);
      deadline.abort();
      await expect(stuck).rejects.toMatchObject({ kind: "timeout" });
      await closed(hanging.sockets[0]!);
    } finally {
      await transport.close();
      await hanging.close();
    }
  });

  it("authenticates with the URL's credentials; a wrong password or a key not allowed is an auth error", async () => {
    const user = unique();
    const password = `pw-${randomBytes(8).toString("hex")}`;
    const stream = unique();
    await admin.call("ACL", "SETUSER", user, "on", `>${password}`, "~t_dest_*", "+@all");
    const transport = createRedisTransport();
    try {
      const wrong = `wrong-${randomBytes(8).toString("hex")}`;
      const refused = await transport
        .send(target(stream), message(), context({ credentials: { username: user, password: wrong } }))
        .catch((e) => e);
      expect(refused).toBeInstanceOf(TransportError);
      expect(refused).toMatchObject({ kind: "auth_error", message: expect.stringMatching(/^WRONGPASS/) });
      expect(JSON.stringify({ ...refused, message: refused.message })).not.toContain(wrong);

      const credentials = { username: user, password };
      await transport.send(target(stream), message(), context({ credentials }));
      expect(await admin.xlen(stream)).toBe(1);
      // The pooled connection is the user's.
      expect(String(await admin.call("CLIENT", "LIST"))).toContain(`user=${user} `);

      // ACL: this user may write only keys starting t_dest_.
      const notAllowed = transport.send(target(`other_${randomUUID()}`), message(), context({ credentials }));
      await expect(notAllowed).rejects.toMatchObject({
        kind: "auth_error",
        message: expect.stringMatching(/^NOPERM/),
      });
    } finally {
      await transport.close();
      await admin.call("ACL", "DELUSER", user);
      await admin.del(stream);
    }
  });

  it("speaks TLS for rediss://, sending the URL's host name and refusing a certificate it cannot verify", async () => {
    // TLS in front of the local Redis, with a certificate from a CA the process does not trust.
    const pki = makePki();
    const names: string[] = [];
    const server = createTlsServer(
      {
        ...pki.server,
        SNICallback: (name, done) => {
          names.push(name);
          done(null, createSecureContext(pki.server));
        },
      },
      (socket) => socket.pipe(createConnection(REDIS_PORT, "127.0.0.1")).pipe(socket),
    );
    const port = await listen(server);
    const transport = createRedisTransport();
    try {
      const err = await transport
        .send(target(unique(), { tls: true, port }), message(), context())
        .catch((e) => e);
      expect(errorKind(err)).toBe("tls_error");
      expect(names).toEqual(["redis.test"]);
    } finally {
      await transport.close();
      server.close();
    }
  });

  it("pools one connection per destination: reused, reopened once broken, bounded, closed by close()", async () => {
    const proxy = await relay(REDIS_PORT);
    const stream = unique();
    const transport = createRedisTransport({ maxConnections: 1 });
    const via = (overrides: Partial<RedisTarget> = {}) => target(stream, { port: proxy.port, ...overrides });
    try {
      await transport.send(via(), message(), context());
      await Promise.all([
        transport.send(via(), message(), context()),
        transport.send(via(), message(), context()),
      ]);
      expect(proxy.sockets).toHaveLength(1);
      expect(await admin.xlen(stream)).toBe(3);

      // The server side closes it: a send that finds it closing fails as a connection error, and
      // the next one opens a new connection; nothing is left unhandled.
      proxy.sockets[0]!.destroy();
      const first = await transport.send(via(), message(), context()).then(
        () => "sent",
        (e) => errorKind(e),
      );
      expect(["sent", "connection_error"]).toContain(first);
      await transport.send(via(), message(), context());
      expect(proxy.sockets).toHaveLength(2);

      // Another destination (database 1) with a bound of one: the first connection is closed.
      await transport.send(via({ db: 1 }), message(), context());
      expect(proxy.sockets).toHaveLength(3);
      await closed(proxy.sockets[1]!);
      expect(proxy.open()).toBe(1);

      await transport.close();
      await closed(proxy.sockets[2]!);
      expect(proxy.open()).toBe(0);
    } finally {
      await transport.close();
      await proxy.close();
      await admin.del(stream);
      const db1 = new Redis({ host: "127.0.0.1", port: REDIS_PORT, db: 1, lazyConnect: true });
      await db1.connect();
      await db1.del(stream);
      db1.disconnect();
    }
  });
});
