import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Endpoint,
  Herald,
  verifyWebhook,
  WebhookVerificationError,
} from "../../packages/sdk/src/index.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// One retry after 1 s: a delivery that keeps failing is `failed` after 2 attempts.
let sys: TestSystem;
let receiver: Receiver;
let herald: Herald;
beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  receiver = await startReceiver();
  herald = new Herald({ apiKey: sys.key, baseUrl: sys.url });
  await herald.apps.create({ name: "Delivered", uid: "delivered" });
  await herald.eventTypes.create({ name: "invoice.paid" });
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

const POLL = { timeout: 20_000 };

describe("a delivery, end to end through the SDK", () => {
  it("arrives signed: verifyWebhook accepts it with the endpoint's secret, and the attempt is listed", async () => {
    const endpoint = await herald.endpoints.create({ app: "delivered", url: `${receiver.url}/ok` });
    const { secret } = await herald.endpoints.retrieveSecret(endpoint.id);
    const event = await herald.events.send({
      app: "delivered",
      type: "invoice.paid",
      data: { invoice: "in_1" },
    });

    await expect.poll(() => receiver.received("/ok").length, POLL).toBe(1);
    const got = receiver.received("/ok")[0]!;
    const payload = verifyWebhook(secret, got.headers, got.body);
    expect(payload).toMatchObject({ type: "invoice.paid", data: { invoice: "in_1" } });
    expect(got.headers["webhook-id"]).toBe(event.id);
    expect(() => verifyWebhook(secret, got.headers, got.body.replace("in_1", "in_2"))).toThrow(
      WebhookVerificationError,
    );

    await expect
      .poll(
        async () => (await herald.attempts.list({ endpoint: endpoint.id }).toArray()).map((a) => a.status),
        POLL,
      )
      .toEqual(["succeeded"]);
    const [attempt] = await herald.attempts.list({ event: event.id }).toArray();
    expect(attempt).toMatchObject({ event: event.id, endpoint: endpoint.id, response_status: 200 });
    expect((await herald.attempts.retrieve(attempt!.id)).id).toBe(attempt!.id);
    const deliveries = await herald.events.listDeliveries(event.id).toArray();
    expect(deliveries).toMatchObject([{ endpoint: endpoint.id, status: "succeeded", attempts: 1 }]);
  });

  it("pages an event's deliveries by endpoint, and replays what failed until it succeeds", async () => {
    receiver.on("/down", { status: 500, body: "down" });
    const endpoints: Endpoint[] = [];
    for (let i = 0; i < 3; i++)
      endpoints.push(await herald.endpoints.create({ app: "delivered", url: `${receiver.url}/down` }));
    const event = await herald.events.send({
      app: "delivered",
      type: "invoice.paid",
      data: { invoice: "in_2" },
    });
    const failing = () => herald.events.listDeliveries(event.id, { limit: 1 }).toArray();
    await expect
      .poll(async () => (await failing()).filter((d) => endpoints.some((e) => e.id === d.endpoint)), POLL)
      .toMatchObject(endpoints.map(() => ({ status: "failed", attempts: 2 })));
    const pages = [];
    for await (const page of herald.events.listDeliveries(event.id, { limit: 1 }).pages()) pages.push(page);
    expect(pages.length).toBeGreaterThanOrEqual(3);

    receiver.on("/down", { status: 200 });
    const replay = await herald.endpoints.replay(endpoints[0]!.id, { event: event.id });
    expect(replay).toMatchObject({ object: "replay", queued: 1 });
    await expect.poll(async () => (await herald.replays.retrieve(replay.id)).succeeded, POLL).toBe(1);
    const after = await herald.events.listDeliveries(event.id).toArray();
    expect(after.find((d) => d.endpoint === endpoints[0]!.id)?.status).toBe("succeeded");
    expect(after.find((d) => d.endpoint === endpoints[1]!.id)?.status).toBe("failed");
  });
});
