import { topologyNames } from "@herald/broker";
import { newId } from "@herald/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "./support/gateway.ts";
import { drainQueue } from "./support/isolation.ts";
import { startTcpProxy, type TcpProxy } from "./support/tcpProxy.ts";

let proxy: TcpProxy;
let gw: TestGateway;

beforeAll(async () => {
  proxy = await startTcpProxy("127.0.0.1", 5672);
  gw = await startGateway({
    AMQP_URL: `amqp://guest:guest@127.0.0.1:${proxy.port}`,
    OUTBOX_RELAY_INTERVAL: "200ms",
    OUTBOX_RELAY_AFTER: "500ms",
  });
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid" } });
});
afterAll(async () => {
  await proxy.restore().catch(() => {});
  await gw.close();
  await proxy.close();
});

describe("the outbox", () => {
  it("accepts events while RabbitMQ is unreachable and publishes each exactly once when it is back", async () => {
    const queue = topologyNames(gw.prefix).queues.dispatcherEvents;
    await proxy.cut();
    await expect.poll(() => gw.gateway.deps.broker.connected, { timeout: 5000 }).toBe(false);
    expect((await gw.request("GET", "/readyz")).status).toBe(503);

    const accepted: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await gw.request("POST", "/v3/events", {
        json: { app: "acme", type: "invoice.paid", data: { i } },
      });
      expect(res.status).toBe(201);
      accepted.push(res.body.id);
    }
    expect(await gw.gateway.deps.prisma.outboxMessage.count()).toBe(5);
    expect(await drainQueue(queue)).toEqual([]);

    await proxy.restore();
    await expect
      .poll(() => gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 20_000, interval: 200 })
      .toBe(0);
    expect((await gw.request("GET", "/readyz")).status).toBe(200);
    const published = (await drainQueue(queue)).map((m) => (m.body as { event_id: string }).event_id);
    expect(published.sort()).toEqual([...accepted].sort());
  });

  it("publishes events accepted together several to a message, each once, and deletes their rows", async () => {
    const queue = topologyNames(gw.prefix).queues.dispatcherEvents;
    await drainQueue(queue);
    const accepted = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const res = await gw.request("POST", "/v3/events", {
          json: { app: "acme", type: "invoice.paid", data: { i } },
        });
        expect(res.status).toBe(201);
        return res.body.id as string;
      }),
    );
    await expect
      .poll(() => gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 10_000, interval: 100 })
      .toBe(0);
    // Only dispatchers that read them take them: none of them in the single form's queue.
    expect(await drainQueue(queue)).toEqual([]);
    const messages = await drainQueue(topologyNames(gw.prefix).queues.dispatcherEventBatches);
    const events = messages.flatMap((m) =>
      m.name === "events.created.v1"
        ? (m.body as { events: { event_id: string; traceparent?: string }[] }).events
        : [m.body as { event_id: string }],
    );
    expect(events.map((e) => e.event_id).sort()).toEqual([...accepted].sort());
    // Fewer messages than events: those committed together went together.
    expect(messages.length).toBeLessThan(accepted.length);
    expect(messages.every((m) => m.name === "events.created.v1")).toBe(true);
  });

  it("relays a row a crashed process committed but never published", async () => {
    const queue = topologyNames(gw.prefix).queues.dispatcherEvents;
    await drainQueue(queue);
    const eventId = newId("event");
    await gw.gateway.deps.prisma.outboxMessage.create({
      data: {
        name: "event.created.v1",
        messageId: newId("message"),
        payload: {
          event_id: eventId,
          account_id: "acct_x",
          app_id: "app_x",
          type: "invoice.paid",
          created_at: new Date().toISOString(),
        },
        createdAt: new Date(Date.now() - 60_000),
      },
    });
    await expect.poll(() => gw.gateway.deps.prisma.outboxMessage.count(), { timeout: 10_000 }).toBe(0);
    const messages = await drainQueue(queue);
    expect(messages.map((m) => (m.body as { event_id: string }).event_id)).toEqual([eventId]);
  });
});
