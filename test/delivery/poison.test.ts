import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { topologyNames } from "@herald/broker";
import type { AttemptCompletedV1 } from "@herald/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Drained, drainQueue } from "../support/isolation.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * No message can stop a queue: what one customer's receiver answers, or one message the
 * database refuses, never holds up the results of anyone else.
 */
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

describe("responses with bytes PostgreSQL cannot store as text", () => {
  let sys: TestSystem;
  beforeAll(async () => {
    // A batch wait long enough that results of the three apps share batches.
    sys = await startSystem({ DISPATCHER_BATCH_WAIT: "50ms" });
  });
  afterAll(() => sys.close());

  it("are recorded, and the deliveries next to them in the same batches succeed", async () => {
    receiver.on("/nul", { status: 200, body: "ok\u0000\u0000" });
    receiver.on("/bytes", { status: 200, body: Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x00, 0xc3]) });
    const apps = ["nul", "bytes", "healthy"] as const;
    const f = Object.fromEntries(apps.map((app) => [app, fixtures(sys, receiver, app)]));
    for (const app of apps) {
      await setupApp(sys, app === "nul" ? ["order.paid"] : [], app);
      await f[app]!.endpoint(`/${app}`);
    }
    const sent: Record<string, string[]> = { nul: [], bytes: [], healthy: [] };
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        for (const app of apps) sent[app]!.push(await f[app]!.send("order.paid", { i }));
      }),
    );
    for (const app of apps) {
      await expect
        .poll(
          async () =>
            (await sys.request("GET", `/v3/events?app=${app}&status=succeeded&limit=100`)).body.data.length,
          { timeout: 20_000 },
        )
        .toBe(30);
    }
    const [nul] = await f.nul!.attempts(`event=${sent.nul![0]}`);
    const [bytes] = await f.bytes!.attempts(`event=${sent.bytes![0]}`);
    const read = async (id: string) => (await sys.request("GET", `/v3/attempts/${id}`)).body.response_body;
    // Each byte PostgreSQL cannot hold becomes U+FFFD; the rest is kept as it came.
    expect(await read(nul!.id)).toBe("ok\uFFFD\uFFFD");
    expect(await read(bytes!.id)).toBe("ok\uFFFD\uFFFD\uFFFD\uFFFD");
  });
});

describe("a result message the database refuses", () => {
  let sys: TestSystem;
  beforeAll(async () => {
    // No sender: the test reports the attempts' outcomes itself.
    sys = await startSystem({ DISPATCHER_BATCH_WAIT: "200ms" }, { dispatchers: 1, senders: 0 });
  });
  afterAll(() => sys.close());

  const result = (attempt: { id: string; deliveryId: string; endpointId: string }): AttemptCompletedV1 => ({
    attempt_id: attempt.id,
    delivery_id: attempt.deliveryId,
    endpoint_id: attempt.endpointId,
    succeeded: true,
    response_status: 200,
    response_body: "ok",
    error: null,
    duration_ms: 5,
    retry_after_ms: null,
    trace_id: null,
    completed_at: new Date().toISOString(),
  });

  it("goes to the dead-letter queue after 5 tries with the error, while the rest of its batch commits", async () => {
    const f = fixtures(sys, receiver, "poison");
    await setupApp(sys, ["order.paid"], "poison");
    await f.endpoint("/never-called");
    const events: string[] = [];
    for (let i = 0; i < 5; i++) events.push(await f.send("order.paid", { i }));
    const prisma = sys.gateway.deps.prisma;
    const pending = () =>
      prisma.attempt.findMany({ where: { eventId: { in: events } }, orderBy: { eventId: "asc" } });
    await expect.poll(async () => (await pending()).length, { timeout: 10_000 }).toBe(5);
    const [bad, ...good] = await pending();
    // duration_ms past a PostgreSQL integer: a value the database refuses (22003) every time.
    const poison = { ...result(bad!), duration_ms: 2 ** 31 };
    const { broker } = sys.gateway.deps;
    await Promise.all([
      broker.publish("attempt.completed.v1", poison),
      ...good.map((a) => broker.publish("attempt.completed.v1", result(a))),
    ]);

    for (const a of good)
      await expect.poll(() => f.status(a.eventId, a.endpointId), { timeout: 10_000 }).toBe("succeeded");
    const names = topologyNames(sys.prefix);
    const dead = await deadLetters(names.deadQueue, 1, 15_000);
    expect(dead[0]).toMatchObject({
      name: "attempt.completed.v1",
      body: poison,
      headers: {
        "x-herald-reason": "handler_failed",
        "x-herald-queue": names.queues.dispatcherResults,
        "x-herald-failures": 5,
        "x-herald-error-code": "22003",
      },
    });
    expect(String(dead[0]!.headers["x-herald-error"])).toMatch(/out of range/);
    expect(await f.status(bad!.eventId, bad!.endpointId)).toBe("pending");

    // The queue is not held: the attempt's true result, sent after, is recorded.
    await broker.publish("attempt.completed.v1", result(bad!));
    await expect.poll(() => f.status(bad!.eventId, bad!.endpointId), { timeout: 10_000 }).toBe("succeeded");

    const metrics = await fetch(`http://127.0.0.1:${portOf(sys.dispatchers[0]!.healthServer())}/metrics`);
    const text = await metrics.text();
    expect(text).toContain(
      `herald_messages_dead_lettered_total{queue="${names.queues.dispatcherResults}",reason="handler_failed",service="dispatcher"} 1`,
    );
  });

  it("that carries several results does not take the others in it down with the one refused", async () => {
    const f = fixtures(sys, receiver, "batched");
    await setupApp(sys, ["order.paid"], "batched");
    await f.endpoint("/never-called");
    const events: string[] = [];
    for (let i = 0; i < 4; i++) events.push(await f.send("order.paid", { i }));
    const prisma = sys.gateway.deps.prisma;
    const pending = () =>
      prisma.attempt.findMany({ where: { eventId: { in: events } }, orderBy: { eventId: "asc" } });
    await expect.poll(async () => (await pending()).length, { timeout: 10_000 }).toBe(4);
    const [bad, ...good] = await pending();
    const located = (a: typeof bad & {}) => ({ ...result(a!), event_id: a!.eventId });
    const poison = { ...located(bad!), duration_ms: 2 ** 31 };
    const names = topologyNames(sys.prefix);
    await sys.gateway.deps.broker.publish("attempts.completed.v1", {
      results: [located(good[0]!), poison, ...good.slice(1).map(located)],
    });

    // The good results are recorded at the first refusal, not after the message's five tries.
    const statuses = async () =>
      (
        await prisma.delivery.findMany({ where: { eventId: { in: events } }, orderBy: { eventId: "asc" } })
      ).map((d) => d.status);
    await expect
      .poll(statuses, { timeout: 5_000 })
      .toEqual(["pending", "succeeded", "succeeded", "succeeded"]);
    const dead = await deadLetters(names.deadQueue, 1, 15_000);
    expect(dead[0]).toMatchObject({
      name: "attempts.completed.v1",
      headers: {
        "x-herald-reason": "handler_failed",
        "x-herald-failures": 5,
        "x-herald-error-code": "22003",
      },
    });
    // Its true result, reported later, is recorded.
    await sys.gateway.deps.broker.publish("attempts.completed.v1", { results: [located(bad!)] });
    await expect
      .poll(statuses, { timeout: 10_000 })
      .toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
  });

  it("that does not parse goes to the dead-letter queue at once, with the reason", async () => {
    const names = topologyNames(sys.prefix);
    await sys.gateway.deps.broker.publish("retry.due.v1", { attempt_id: 42 } as never);
    const dead = await deadLetters(names.deadQueue, 1, 10_000);
    expect(dead[0]!.headers).toMatchObject({
      "x-herald-reason": "unparseable",
      "x-herald-queue": names.queues.dispatcherRetries,
      "x-herald-failures": 1,
    });
    expect(String(dead[0]!.headers["x-herald-error"])).toContain("delivery_id");
  });
});

const portOf = (server: Server | null) => (server!.address() as AddressInfo).port;

/** Reads the dead-letter queue (acking) until `count` messages have come. */
async function deadLetters(queue: string, count: number, timeout: number): Promise<Drained[]> {
  const dead: Drained[] = [];
  await expect
    .poll(
      async () => {
        dead.push(...(await drainQueue(queue)));
        return dead.length;
      },
      { timeout },
    )
    .toBe(count);
  return dead;
}
