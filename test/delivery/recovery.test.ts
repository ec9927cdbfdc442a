import { newId } from "@herald/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem({
    SWEEP_INTERVAL: "300ms",
    SWEEP_GRACE: "1s",
    ATTEMPT_TIMEOUT: "1s",
    ATTEMPT_DEADLINE: "3s",
  });
  receiver = await startReceiver();
  await setupApp(sys, ["order.paid"]);
  f = fixtures(sys, receiver);
  await f.endpoint("/witness");
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

/** What a dispatcher leaves when it dies after committing an attempt and before handing it over. */
async function strandedAttempt(
  path: string,
  sentAt: Date | null,
): Promise<{ eventId: string; endpointId: string }> {
  const eventId = await f.send("order.paid");
  // Fan-out is over once the app's other endpoint has the event; only then add this one.
  await expect
    .poll(() => receiver.received("/witness").some((r) => r.headers["webhook-id"] === eventId), {
      timeout: 10_000,
    })
    .toBe(true);
  const endpointId = await f.endpoint(path);
  const prisma = sys.gateway.deps.prisma;
  const event = await prisma.event.findUniqueOrThrow({ where: { id: eventId } });
  const delivery = await prisma.delivery.create({
    data: {
      id: newId("delivery"),
      accountId: event.accountId,
      appId: event.appId,
      eventId,
      endpointId,
      status: "pending",
    },
  });
  await prisma.attempt.create({
    data: {
      id: newId("attempt"),
      accountId: event.accountId,
      appId: event.appId,
      deliveryId: delivery.id,
      eventId,
      endpointId,
      attemptNumber: 1,
      status: "pending",
      url: `${receiver.url}${path}`,
      scheduledAt: new Date(Date.now() - 60_000),
      sentAt,
    },
  });
  return { eventId, endpointId };
}

describe("the sweeper", () => {
  it("sends an attempt a crash left committed but never handed to a sender", async () => {
    const { eventId, endpointId } = await strandedAttempt("/stranded", null);
    await expect.poll(() => f.status(eventId, endpointId), { timeout: 15_000 }).toBe("succeeded");
    expect(receiver.received("/stranded")).toHaveLength(1);
  });

  it("sends again an attempt whose result never came back past its deadline", async () => {
    const { eventId, endpointId } = await strandedAttempt("/lost", new Date(Date.now() - 60_000));
    await expect.poll(() => f.status(eventId, endpointId), { timeout: 15_000 }).toBe("succeeded");
    expect(receiver.received("/lost")).toHaveLength(1);
  });

  it("does not send a stranded attempt of an endpoint deleted meanwhile", async () => {
    const { eventId, endpointId } = await strandedAttempt("/deleted-meanwhile", null);
    await sys.gateway.deps.prisma.endpoint.update({
      where: { id: endpointId },
      data: { deletedAt: new Date() },
    });
    await expect.poll(() => f.status(eventId, endpointId), { timeout: 15_000 }).toBe("dropped");
    expect(receiver.received("/deleted-meanwhile")).toHaveLength(0);
  });
});

describe("a replay interrupted by a restart", () => {
  it("finishes when its message is delivered again: stranded attempts sent, the rest requeued", async () => {
    const prisma = sys.gateway.deps.prisma;
    const events: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await f.send("order.paid", { i });
      await expect
        .poll(() => receiver.received("/witness").some((r) => r.headers["webhook-id"] === id), {
          timeout: 10_000,
        })
        .toBe(true);
      events.push(id);
    }
    const endpointId = await f.endpoint("/replayed");
    const failedAt = new Date(Date.now() - 60_000);
    const deliveries: string[] = [];
    let accountId = "";
    for (const eventId of events) {
      const event = await prisma.event.findUniqueOrThrow({ where: { id: eventId } });
      accountId = event.accountId;
      const base = { accountId: event.accountId, appId: event.appId, eventId, endpointId };
      const d = await prisma.delivery.create({
        data: {
          id: newId("delivery"),
          ...base,
          status: "failed",
          attempts: 1,
          lastAttemptAt: failedAt,
          updatedAt: failedAt,
        },
      });
      await prisma.attempt.create({
        data: {
          id: newId("attempt"),
          ...base,
          deliveryId: d.id,
          attemptNumber: 1,
          status: "failed",
          url: "x",
          scheduledAt: failedAt,
          completedAt: failedAt,
        },
      });
      deliveries.push(d.id);
    }
    // What a dispatcher killed mid-replay leaves: the replay running, its first delivery back to
    // pending with an attempt committed but never handed to a sender, the others still failed.
    const cutoff = new Date();
    const replay = await prisma.replay.create({
      data: { id: newId("replay"), accountId, endpointId, status: "running", queued: 3, createdAt: cutoff },
    });
    const first = await prisma.delivery.findFirstOrThrow({ where: { id: deliveries[0]! } });
    await prisma.delivery.updateMany({ where: { id: first.id }, data: { status: "pending" } });
    await prisma.attempt.create({
      data: {
        id: newId("attempt"),
        accountId,
        appId: first.appId,
        deliveryId: first.id,
        eventId: first.eventId,
        endpointId,
        attemptNumber: 2,
        status: "pending",
        url: `${receiver.url}/replayed`,
        scheduledAt: cutoff,
        replayId: replay.id,
      },
    });
    // The broker delivers the replay's message again to the dispatcher that takes over.
    await sys.gateway.deps.broker.publish("replay.requested.v1", {
      replay_id: replay.id,
      account_id: accountId,
      endpoint_id: endpointId,
      since: null,
      event_id: null,
      cutoff: cutoff.toISOString(),
    });
    for (const eventId of events)
      await expect.poll(() => f.status(eventId, endpointId), { timeout: 10_000 }).toBe("succeeded");
    expect(receiver.received("/replayed").map((r) => r.headers["webhook-id"])).toEqual(events);
    const done = (await sys.request("GET", `/v3/replays/${replay.id}`)).body;
    expect(done).toMatchObject({ status: "completed", queued: 3, attempted: 3, succeeded: 3, failed: 0 });
  });
});

describe("a sender told to stop", () => {
  it("finishes the attempt in flight and reports it before it exits", async () => {
    receiver.on("/slow", { status: 200, delayMs: 800 });
    const ep = await f.endpoint("/slow");
    const eventId = await f.send("order.paid");
    await expect.poll(() => receiver.received("/slow").length, { timeout: 10_000 }).toBe(1);
    await sys.senders[0]!.stop();
    await expect.poll(() => f.status(eventId, ep), { timeout: 10_000 }).toBe("succeeded");
    expect(receiver.received("/slow")).toHaveLength(1);
    sys.senders.length = 0;
  });
});
