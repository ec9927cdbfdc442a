import type { NatsTarget } from "@herald/contracts/destinations";
import {
  type ConnectionOptions,
  connect,
  DiscardPolicy,
  type JetStreamManager,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from "nats";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadPort } from "../../../../test/support/ports.ts";
import { createNatsTransport } from "./nats.ts";
import { credentialServers, NATS_TOKEN, NATS_USER, untrustedTlsServer } from "./natsTestServers.ts";
import { configurePools } from "./pool.ts";
import {
  closed,
  context,
  failure,
  hangingServer,
  kindOf,
  relay,
  signer,
  tcpServer,
  unique,
} from "./testSupport.ts";
import { TransportError } from "./types.ts";

const NATS = "127.0.0.1:4222";
const { secret: SECRET, signed } = signer();

function target(subject: string, fields: Partial<NatsTarget> = {}): NatsTarget {
  return { type: "nats", tls: false, host: "nats.invalid", port: 4222, subject, ...fields };
}

/** A message's NATS headers as the plain object a Standard Webhooks verifier takes. */
function headerObject(headers: MsgHdrs | undefined): Record<string, string> {
  if (!headers) throw new Error("the message has no headers");
  return Object.fromEntries(headers.keys().map((k) => [k, headers.get(k)]));
}

/** The first message of a subscription made (and known to the server) before `send` runs. */
async function received(nc: NatsConnection, subject: string, send: () => Promise<unknown>): Promise<Msg> {
  const sub = nc.subscribe(subject, { max: 1 });
  await nc.flush();
  await send();
  for await (const m of sub) return m;
  throw new Error("the subscription ended without a message");
}

let admin: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  // Every connection idle at once after its send: the bound closes the oldest (pool.test.ts has the rule).
  configurePools({ busyMs: 0 });
  admin = await connect({ servers: NATS });
  jsm = await admin.jetstreamManager();
});

afterAll(async () => {
  await admin?.close();
});

/** A stream taking one t_dest_ subject, deleted after `use`. */
async function withStream(
  config: { max_msgs?: number; discard?: DiscardPolicy },
  use: (stream: string, subject: string) => Promise<void>,
): Promise<void> {
  const subject = unique();
  const stream = subject.toUpperCase();
  await jsm.streams.add({ name: stream, subjects: [subject], ...config });
  try {
    await use(stream, subject);
  } finally {
    await jsm.streams.delete(stream);
  }
}

describe("NATS transport", () => {
  it("publishes to a JetStream stream: acknowledged, deduplicated by event id, and verifiable", async () => {
    const transport = createNatsTransport();
    try {
      await withStream({}, async (stream, subject) => {
        const message = signed({ type: "invoice.paid", amount: "12.50 €" }, { "x-tenant": "acme" });
        const ctx = context();
        const receipt = await transport.send(target(subject), message, ctx);
        expect(receipt.detail).toBe(`stream ${stream}, sequence 1`);
        expect(ctx.resolved).toEqual(["nats.invalid"]);

        // Read back by a client of its own.
        const stored = await jsm.streams.getMessage(stream, { seq: 1 });
        expect(Buffer.from(stored.data).equals(Buffer.from(message.body, "utf8"))).toBe(true);
        const headers = headerObject(stored.header);
        expect(headers["webhook-id"]).toBe(message.eventId);
        expect(headers["Nats-Msg-Id"]).toBe(message.eventId);
        expect(headers["x-tenant"]).toBe("acme");
        expect(headers["content-type"]).toBe("application/json");
        expect(new Webhook(SECRET).verify(stored.string(), headers)).toEqual(JSON.parse(message.body));

        // The same event again (a retry whose acknowledgement was lost): stored once.
        const again = await transport.send(target(subject), message, context());
        expect(again.detail).toMatch(new RegExp(`^stream ${stream}, sequence 1 `));
        expect((await jsm.streams.info(stream)).state.messages).toBe(1);
      });
    } finally {
      await transport.close();
    }
  });

  it("publishes core NATS when no stream takes the subject, the flush acknowledged", async () => {
    const transport = createNatsTransport();
    try {
      const subject = unique();
      const message = signed({ type: "order.created", id: 7 });
      const m = await received(admin, subject, async () => {
        const receipt = await transport.send(target(subject), message, context());
        expect(receipt.detail).toBe(`subject ${subject} (core NATS, no acknowledgement)`);
      });
      expect(Buffer.from(m.data).equals(Buffer.from(message.body, "utf8"))).toBe(true);
      const headers = headerObject(m.headers);
      expect(headers["webhook-id"]).toBe(message.eventId);
      expect(new Webhook(SECRET).verify(m.string(), headers)).toEqual(JSON.parse(message.body));
    } finally {
      await transport.close();
    }
  });

  it("a message the stream refuses (full, discarding new ones) is rejected, with the stream's reason", async () => {
    const transport = createNatsTransport();
    try {
      await withStream({ max_msgs: 1, discard: DiscardPolicy.New }, async (_stream, subject) => {
        await transport.send(target(subject), signed({ n: 1 }), context());
        const err = await failure(transport.send(target(subject), signed({ n: 2 }), context()));
        expect(err).toBeInstanceOf(TransportError);
        expect(kindOf(err)).toBe("rejected");
        expect((err as Error).message).toContain("maximum messages exceeded");
      });
    } finally {
      await transport.close();
    }
  });

  it("a refused connection is a connection_error", async () => {
    const transport = createNatsTransport();
    try {
      const port = await deadPort();
      const err = await failure(transport.send(target(unique(), { port }), signed({}), context()));
      expect(kindOf(err)).toBe("connection_error");
    } finally {
      await transport.close();
    }
  });

  it("a destination that accepts and never answers times out at the signal, holding up no other", async () => {
    const hanging = await hangingServer();
    const transport = createNatsTransport();
    try {
      const first = context({ timeoutMs: 5_000 });
      let settled = false;
      const stuck = transport.send(target(unique(), { port: hanging.port }), signed({}), first);
      stuck.then(
        () => (settled = true),
        () => (settled = true),
      );
      await hanging.connections(1);

      // Another destination, meanwhile: answered while the first still waits.
      const subject = unique();
      await received(admin, subject, () => transport.send(target(subject), signed({}), context()));
      expect(settled).toBe(false);

      first.controller.abort();
      const err = await failure(stuck);
      expect(err).toBeInstanceOf(TransportError);
      expect(kindOf(err)).toBe("timeout");

      // The half-open connection was not kept: the next attempt connects again.
      const second = context({ timeoutMs: 5_000 });
      const retry = transport.send(target(unique(), { port: hanging.port }), signed({}), second);
      await hanging.connections(2);
      second.controller.abort();
      expect(kindOf(await failure(retry))).toBe("timeout");

      // Neither socket is left open once the client's connect timeout ends it.
      await closed(hanging.sockets[0]!);
      await closed(hanging.sockets[1]!);
    } finally {
      await transport.close();
      await hanging.close();
    }
  });

  it("a connection that stops answering after connecting times out, is dropped and closed, and the next send reconnects", async () => {
    let asked!: () => void;
    const publishing = new Promise<void>((resolve) => (asked = resolve));
    // Says INFO and answers the connect's PING, then never another word.
    const silent = await tcpServer((socket) => {
      socket.write(
        `INFO ${JSON.stringify({ server_id: "silent", version: "2.9.10", proto: 1, headers: true, max_payload: 1048576 })}\r\n`,
      );
      let answered = false;
      socket.on("data", (data) => {
        const text = data.toString();
        if (!answered && text.includes("PING\r\n")) {
          answered = true;
          socket.write("PONG\r\n");
        }
        // Connected, and into the send: asking JetStream which stream takes the subject.
        if (text.includes("$JS.API.STREAM.NAMES")) asked();
      });
    });
    const transport = createNatsTransport();
    try {
      const first = context();
      const stuck = transport.send(target(unique(), { port: silent.port }), signed({}), first);
      await publishing;
      first.controller.abort();
      expect(kindOf(await failure(stuck))).toBe("timeout");
      await closed(silent.sockets[0]!);

      const second = context();
      const retry = transport.send(target(unique(), { port: silent.port }), signed({}), second);
      await silent.connections(2);
      second.controller.abort();
      expect(kindOf(await failure(retry))).toBe("timeout");
    } finally {
      await transport.close();
      await silent.close();
    }
  });

  it("two sends to one destination share one connection; close() closes it; past the bound the oldest is closed", async () => {
    const a = await relay(4222);
    const b = await relay(4222);
    const transport = createNatsTransport({ maxConnections: 1 });
    try {
      const subject = unique();
      await received(admin, subject, () =>
        transport.send(target(subject, { port: a.port }), signed({}), context()),
      );
      await received(admin, subject, () =>
        transport.send(target(subject, { port: a.port }), signed({}), context()),
      );
      expect(a.sockets).toHaveLength(1);

      // A second destination with a bound of one: the first's connection is closed.
      await received(admin, subject, () =>
        transport.send(target(subject, { port: b.port }), signed({}), context()),
      );
      expect(b.sockets).toHaveLength(1);
      await closed(a.sockets[0]!);

      await transport.close();
      await closed(b.sockets[0]!);
    } finally {
      await transport.close();
      await a.close();
      await b.close();
    }
  });

  it("tls:// connects over TLS and refuses a certificate it cannot verify", async () => {
    const server = await untrustedTlsServer();
    const transport = createNatsTransport();
    try {
      const tls = target(unique(), { tls: true, port: server.port });
      const err = await failure(transport.send(tls, signed({}), context()));
      expect(kindOf(err)).toBe("tls_error");
    } finally {
      await transport.close();
      server.close();
    }
  });
});

describe("NATS transport with credentials", () => {
  let servers: Awaited<ReturnType<typeof credentialServers>> | undefined;
  let usersPort: number;
  let tokenPort: number;

  beforeAll(async () => {
    servers = await credentialServers();
    ({ usersPort, tokenPort } = servers);
  });

  afterAll(() => servers?.close());

  async function reader(port: number, auth: Partial<ConnectionOptions>): Promise<NatsConnection> {
    return connect({ servers: `127.0.0.1:${port}`, ...auth });
  }

  it("connects with a user and password, and a wrong password or none is an auth_error without the secret", async () => {
    const transport = createNatsTransport();
    const nc = await reader(usersPort, { user: NATS_USER.username, pass: NATS_USER.password });
    try {
      const subject = unique();
      const credentials = NATS_USER;
      const m = await received(nc, subject, () =>
        transport.send(target(subject, { port: usersPort }), signed({ ok: true }), context({ credentials })),
      );
      expect(m.string()).toBe(JSON.stringify({ ok: true }));

      const wrong = { ...NATS_USER, password: "not-the-pa55word" };
      const err = await failure(
        transport.send(target(subject, { port: usersPort }), signed({}), context({ credentials: wrong })),
      );
      expect(err).toBeInstanceOf(TransportError);
      expect(kindOf(err)).toBe("auth_error");
      expect((err as Error).message).not.toContain("not-the-pa55word");

      const none = await failure(transport.send(target(subject, { port: usersPort }), signed({}), context()));
      expect(kindOf(none)).toBe("auth_error");
    } finally {
      await nc.close();
      await transport.close();
    }
  });

  it("connects with a token given as the URL's user alone", async () => {
    const transport = createNatsTransport();
    const nc = await reader(tokenPort, { token: NATS_TOKEN });
    try {
      const subject = unique();
      const credentials = { username: NATS_TOKEN, password: "" };
      const m = await received(nc, subject, () =>
        transport.send(target(subject, { port: tokenPort }), signed({ ok: 1 }), context({ credentials })),
      );
      expect(m.string()).toBe(JSON.stringify({ ok: 1 }));

      const wrong = { username: "n0t-the-t0ken", password: "" };
      const err = await failure(
        transport.send(target(subject, { port: tokenPort }), signed({}), context({ credentials: wrong })),
      );
      expect(kindOf(err)).toBe("auth_error");
      expect((err as Error).message).not.toContain("n0t-the-t0ken");
    } finally {
      await nc.close();
      await transport.close();
    }
  });

  it("a core publish the account may not make is rejected, and the connection still serves others", async () => {
    const transport = createNatsTransport();
    const nc = await reader(usersPort, { user: NATS_USER.username, pass: NATS_USER.password });
    try {
      const credentials = NATS_USER;
      const err = await failure(
        transport.send(target("t_denied.orders", { port: usersPort }), signed({}), context({ credentials })),
      );
      expect(err).toBeInstanceOf(TransportError);
      expect(kindOf(err)).toBe("rejected");

      const subject = unique();
      const m = await received(nc, subject, () =>
        transport.send(target(subject, { port: usersPort }), signed({ after: 1 }), context({ credentials })),
      );
      expect(m.string()).toBe(JSON.stringify({ after: 1 }));
    } finally {
      await nc.close();
      await transport.close();
    }
  });
});
