import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import amqp from "amqplib";
import { Redis } from "ioredis";
import mqtt from "mqtt";
import { connect as connectNats, RetentionPolicy, StorageType } from "nats";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../packages/sdk/src/index.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { deadPort } from "../support/ports.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";
import { startTcpProxy } from "../support/tcpProxy.ts";

/**
 * Endpoints that are destinations beyond HTTP, through the whole system (gateway, dispatcher,
 * sender) to the real servers on this machine: each delivery read back by an independent
 * client and its signature verified with `standardwebhooks`; retries while the server is out
 * of reach, replay, credentials redacted; and a destination that hangs or refuses holds no other
 * app up.
 * Each type's transport has its own tests beside it (services/sender/src/transports/).
 */
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
let redis: Redis;
const run = randomBytes(4).toString("hex");
const streams: string[] = [];

beforeAll(async () => {
  // The breaker never opens: a refusing destination's retries go on through the whole schedule,
  // beside other apps' deliveries, rather than wait behind its paused endpoint.
  sys = await startSystem({ RETRY_SCHEDULE: "1s,1s,1s", ENDPOINT_BREAKER_AFTER: "1000" });
  receiver = await startReceiver();
  await setupApp(sys, ["invoice.paid"]);
  f = fixtures(sys, receiver);
  redis = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true });
  await redis.connect();
});
afterAll(async () => {
  if (streams.length) await redis.del(...streams);
  await redis.acl("DELUSER", `t_dest_${run}`);
  redis.disconnect();
  await sys.close();
  await receiver.close();
});

const stream = (name: string) => {
  const key = `t_dest_${run}_${name}`;
  streams.push(key);
  return key;
};

/** A stream entry as its headers (every field but `body`) and body. */
function entry(fields: string[]): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {};
  let body = "";
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === "body") body = fields[i + 1]!;
    else headers[fields[i]!] = fields[i + 1]!;
  }
  return { headers, body };
}

/** The message checked as a receiver would: by `standardwebhooks`, and by the SDK's verifyWebhook. */
function verified(secret: string, body: string, headers: Record<string, string>): unknown {
  const payload = new Webhook(secret).verify(body, headers);
  expect(verifyWebhook(secret, headers, body)).toEqual(payload);
  return payload;
}

async function secretOf(endpoint: string): Promise<string> {
  return (await sys.request("GET", `/v3/endpoints/${endpoint}/secret`)).body.secret as string;
}

async function endpoint(url: string, app = "acme"): Promise<string> {
  const res = await sys.request("POST", "/v3/endpoints", { json: { app, url } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

describe("a Redis Streams destination", () => {
  it("gets each event as an entry whose signature verifies, the entry id as the attempt's response", async () => {
    const key = stream("plain");
    const ep = await endpoint(`redis://127.0.0.1:6379/0?stream=${key}`);
    const eventId = await f.send("invoice.paid", { amount: 4200, note: "née" });
    await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");

    const [id, fields] = ((await redis.xrange(key, "-", "+")) as [string, string[]][])[0]!;
    const { headers, body } = entry(fields);
    expect(headers["webhook-id"]).toBe(eventId);
    expect(verified(await secretOf(ep), body, headers)).toMatchObject({
      type: "invoice.paid",
      data: { amount: 4200, note: "née" },
    });
    const [attempt] = (await sys.request("GET", `/v3/attempts?endpoint=${ep}`)).body.data;
    expect(attempt).toMatchObject({ status: "succeeded", response_status: null, error: null });
    expect(attempt.response_body).toBe(`stream ${key}, entry ${id}`);
  });

  it("uses the URL's credentials, shown as [redacted] in the endpoint and its attempts", async () => {
    const user = `t_dest_${run}`;
    const password = `pw-${run}-secret`;
    const key = stream("acl");
    await redis.acl("SETUSER", user, "on", `>${password}`, `~t_dest_${run}*`, "+@all");
    const ep = await endpoint(`redis://${user}:${password}@127.0.0.1:6379/0?stream=${key}`);
    const shown = await sys.request("GET", `/v3/endpoints/${ep}`);
    expect(shown.body.url).toBe(`redis://[redacted]@127.0.0.1:6379/0?stream=${key}`);

    const eventId = await f.send("invoice.paid");
    await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    expect(await redis.xlen(key)).toBe(1);
    const attempts = await sys.request("GET", `/v3/attempts?endpoint=${ep}`);
    expect(attempts.body.data[0].url).toBe(shown.body.url);
    expect(JSON.stringify(attempts.body)).not.toContain(password);
  });
});

describe("a RabbitMQ destination", () => {
  it("gets each event as a persistent message, signed, through the URL's credentials", async () => {
    const queue = `t_dest_${run}_amqp`;
    const connection = await amqp.connect("amqp://guest:guest@127.0.0.1:5672");
    const channel = await connection.createChannel();
    try {
      await channel.assertQueue(queue, { durable: false, autoDelete: false });
      const ep = await endpoint(`amqp://guest:guest@127.0.0.1:5672/?routing_key=${queue}`);
      expect((await sys.request("GET", `/v3/endpoints/${ep}`)).body.url).toBe(
        `amqp://[redacted]@127.0.0.1:5672/?routing_key=${queue}`,
      );
      const eventId = await f.send("invoice.paid", { amount: 9 });
      await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
      const message = await channel.get(queue, { noAck: true });
      expect(message).not.toBe(false);
      if (!message) return;
      expect(message.properties.messageId).toBe(eventId);
      expect(message.properties.deliveryMode).toBe(2);
      const headers = Object.fromEntries(
        Object.entries(message.properties.headers ?? {}).map(([k, v]) => [k, String(v)]),
      );
      expect(verified(await secretOf(ep), message.content.toString("utf8"), headers)).toMatchObject({
        data: { amount: 9 },
      });
    } finally {
      await channel.deleteQueue(queue).catch(() => {});
      await connection.close();
    }
  });
});

type S3rver = { run(): Promise<AddressInfo>; close(): Promise<void> };
const S3rver = createRequire(import.meta.url)("s3rver") as new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
}) => S3rver;

describe("an S3 destination (an S3-compatible server)", () => {
  it("gets one object per event, keyed by its id, the headers as metadata, signed by the URL's keys", async () => {
    const directory = await mkdtemp(join(tmpdir(), "herald-s3-"));
    const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
    const base = `http://127.0.0.1:${(await server.run()).port}`;
    try {
      const bucket = `t-dest-${run}`;
      expect((await fetch(`${base}/${bucket}`, { method: "PUT" })).ok).toBe(true);
      // s3rver's one account: it checks the access key id of each signature.
      const ep = await endpoint(`s3://S3RVER:S3RVER@${bucket}/events/?endpoint=${encodeURIComponent(base)}`);
      const eventId = await f.send("invoice.paid", { amount: 11 });
      await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
      const object = await fetch(`${base}/${bucket}/events/${eventId}.json`);
      expect(object.status).toBe(200);
      const meta = (name: string) => object.headers.get(`x-amz-meta-${name}`) ?? "";
      const headers = Object.fromEntries(
        ["webhook-id", "webhook-timestamp", "webhook-signature"].map((n) => [n, meta(n)]),
      );
      expect(verified(await secretOf(ep), await object.text(), headers)).toMatchObject({
        data: { amount: 11 },
      });
      const [attempt] = (await sys.request("GET", `/v3/attempts?endpoint=${ep}`)).body.data;
      expect(attempt.url).toBe(`s3://[redacted]@${bucket}/events/?endpoint=${encodeURIComponent(base)}`);
      expect(attempt.response_body).toContain(`s3://${bucket}/events/${eventId}.json`);
    } finally {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe("a NATS destination", () => {
  it("gets each event through JetStream when a stream takes the subject, acked by the stream", async () => {
    const nc = await connectNats({ servers: "127.0.0.1:4222" });
    const jsm = await nc.jetstreamManager();
    const name = `T_DEST_${run}`;
    const subject = `t_dest.${run}.orders`;
    try {
      await jsm.streams.add({
        name,
        subjects: [subject],
        retention: RetentionPolicy.Limits,
        storage: StorageType.Memory,
      });
      const ep = await endpoint(`nats://127.0.0.1:4222?subject=${subject}`);
      const eventId = await f.send("invoice.paid", { amount: 13 });
      await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
      const stored = await jsm.streams.getMessage(name, { seq: 1 });
      const headers = Object.fromEntries(stored.header.keys().map((k) => [k, stored.header.get(k)]));
      expect(headers["Nats-Msg-Id"]).toBe(eventId);
      expect(verified(await secretOf(ep), stored.string(), headers)).toMatchObject({
        data: { amount: 13 },
      });
      const [attempt] = (await sys.request("GET", `/v3/attempts?endpoint=${ep}`)).body.data;
      expect(attempt.response_body).toBe(`stream ${name}, sequence 1`);
    } finally {
      await jsm.streams.delete(name).catch(() => {});
      await nc.close();
    }
  });
});

describe("an MQTT destination", () => {
  it("gets each event published with QoS 1, the headers as user properties, its signature verifying", async () => {
    const topic = `t_dest/${run}/orders`;
    const subscriber = await mqtt.connectAsync("mqtt://127.0.0.1:1883", { protocolVersion: 5 });
    try {
      const received = new Promise<{ payload: Buffer; properties: Record<string, string | string[]> }>(
        (resolve) =>
          subscriber.on("message", (_topic, payload, packet) =>
            resolve({
              payload,
              properties: (packet.properties?.userProperties ?? {}) as Record<string, string>,
            }),
          ),
      );
      await subscriber.subscribeAsync(topic, { qos: 1 });
      const ep = await endpoint(`mqtt://127.0.0.1:1883?topic=${encodeURIComponent(topic)}&qos=1`);
      const eventId = await f.send("invoice.paid", { amount: 7 });
      const { payload, properties } = await received;
      const headers = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, String(v)]));
      expect(headers["webhook-id"]).toBe(eventId);
      expect(verified(await secretOf(ep), payload.toString("utf8"), headers)).toMatchObject({
        data: { amount: 7 },
      });
      await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    } finally {
      await subscriber.endAsync();
    }
  });
});

describe("every type, while its server is out of reach", () => {
  const queue = `t_dest_${run}_outage`;
  const bucket = `t-dest-${run}-outage`;
  let s3: { server: S3rver; directory: string; port: number };
  let rabbit: amqp.ChannelModel;
  beforeAll(async () => {
    rabbit = await amqp.connect("amqp://guest:guest@127.0.0.1:5672");
    await (await rabbit.createChannel()).assertQueue(queue, { durable: false });
    const directory = await mkdtemp(join(tmpdir(), "herald-s3-"));
    const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
    s3 = { server, directory, port: (await server.run()).port };
    expect((await fetch(`http://127.0.0.1:${s3.port}/${bucket}`, { method: "PUT" })).ok).toBe(true);
  });
  afterAll(async () => {
    await (await rabbit.createChannel()).deleteQueue(queue).catch(() => {});
    await rabbit.close();
    await s3.server.close();
    await rm(s3.directory, { recursive: true, force: true });
  });

  // Each type's server behind a TCP proxy the test cuts and restores: the URL through it.
  const types: [string, () => number, (port: number) => string][] = [
    ["amqp", () => 5672, (port) => `amqp://guest:guest@127.0.0.1:${port}/?routing_key=${queue}`],
    ["nats", () => 4222, (port) => `nats://127.0.0.1:${port}?subject=t_dest.${run}.outage`],
    ["redis", () => 6379, (port) => `redis://127.0.0.1:${port}/0?stream=${stream("outage")}`],
    ["mqtt", () => 1883, (port) => `mqtt://127.0.0.1:${port}?topic=t_dest/${run}/outage`],
    [
      "s3",
      () => s3.port,
      (port) => `s3://${bucket}/outage/?endpoint=${encodeURIComponent(`http://127.0.0.1:${port}`)}`,
    ],
  ];

  it.each(types)(
    "%s: retried until it answers, then its failed deliveries replayed",
    async (_type, target, url) => {
      const proxy = await startTcpProxy("127.0.0.1", target());
      try {
        await proxy.cut();
        const ep = await endpoint(url(proxy.port));
        const retried = await f.send("invoice.paid");
        await expect.poll(() => f.status(retried, ep), { timeout: 15_000 }).toBe("retrying");
        const failed = (await f.attempts(`endpoint=${ep}`)).find((a) => a.status === "failed");
        expect(failed!.error).toBe("connection_error");
        await proxy.restore();
        await expect.poll(() => f.status(retried, ep), { timeout: 15_000 }).toBe("succeeded");

        await proxy.cut();
        const replayed = await f.send("invoice.paid");
        // Four attempts a second apart, all refused: the delivery fails for good.
        await expect.poll(() => f.status(replayed, ep), { timeout: 20_000 }).toBe("failed");
        await proxy.restore();
        const replay = await sys.request("POST", `/v3/endpoints/${ep}/replay`, { json: {} });
        expect(replay.status, JSON.stringify(replay.body)).toBe(202);
        await expect.poll(() => f.status(replayed, ep), { timeout: 15_000 }).toBe("succeeded");
      } finally {
        await proxy.close();
      }
    },
  );
});

describe("a destination that hangs", () => {
  let silent: Server;
  const held = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers a byte: every attempt to it waits its whole timeout.
    silent = createServer((socket) => {
      held.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it("holds up no other app's HTTP endpoint: its deliveries arrive while the hung attempts wait", async () => {
    const port = (silent.address() as { port: number }).port;
    await setupApp(sys, [], "bystander");
    const hung = await endpoint(`redis://127.0.0.1:${port}/0?stream=t_dest_${run}_hung`);
    const hungEvents = await Promise.all(Array.from({ length: 5 }, () => f.send("invoice.paid")));
    await expect.poll(() => held.size, { timeout: 10_000 }).toBeGreaterThan(0);

    const bystander = fixtures(sys, receiver, "bystander");
    const ep = await bystander.endpoint("/bystander");
    const sent = await Promise.all(Array.from({ length: 5 }, () => bystander.send("invoice.paid")));
    for (const eventId of sent)
      await expect.poll(() => bystander.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    // Every bystander delivery succeeded while the hung destination's first attempts were still open.
    const hungAttempts = await f.attempts(`endpoint=${hung}`);
    expect(hungAttempts.filter((a) => a.status !== "pending")).toEqual([]);
    expect(hungEvents).toHaveLength(5);
  });
});

describe("a destination that refuses connections", () => {
  // Nothing listens on its port: each attempt is refused at once, and retried on the schedule.
  const types: [string, (port: number) => string][] = [
    ["redis", (port) => `redis://127.0.0.1:${port}/0?stream=t_dest_${run}_refused`],
    ["amqp", (port) => `amqp://guest:guest@127.0.0.1:${port}/?routing_key=t_dest_${run}_refused`],
  ];

  it.each(types)(
    "%s: holds up no other app's HTTP endpoint: its deliveries arrive while the refused ones are retried",
    async (type, url) => {
      await setupApp(sys, [], `refused-${type}`);
      await setupApp(sys, [], `beside-${type}`);
      const refused = fixtures(sys, receiver, `refused-${type}`);
      const bystander = fixtures(sys, receiver, `beside-${type}`);
      const ep = await endpoint(url(await deadPort()), `refused-${type}`);
      const bystanderEp = await bystander.endpoint(`/beside-${type}`);
      const refusedEvents = await Promise.all(Array.from({ length: 20 }, () => refused.send("invoice.paid")));
      const statuses = () => Promise.all(refusedEvents.map((eventId) => refused.status(eventId, ep)));
      const all = (status: string) => refusedEvents.map(() => status);
      // Every one refused once before the bystander sends: their retries go on beside its deliveries.
      await expect.poll(statuses, { timeout: 10_000 }).toEqual(all("retrying"));
      const sent = await Promise.all(Array.from({ length: 5 }, () => bystander.send("invoice.paid")));
      for (const eventId of sent)
        await expect
          .poll(() => bystander.status(eventId, bystanderEp), { timeout: 15_000 })
          .toBe("succeeded");
      // Every bystander delivery succeeded while the refused ones still had retries to come.
      expect(await statuses()).toEqual(all("retrying"));

      // Then each refused delivery ran out its schedule (1s,1s,1s: four attempts), every one refused.
      await expect.poll(statuses, { timeout: 20_000 }).toEqual(all("failed"));
      const attempts = await refused.attempts(`endpoint=${ep}`);
      expect(attempts.map((a) => a.error)).toEqual(attempts.map(() => "connection_error"));
      const tries = attempts.map((a) => a.attempt_number).sort();
      expect(tries).toEqual(refusedEvents.flatMap(() => [1, 2, 3, 4]).sort());
    },
  );
});
