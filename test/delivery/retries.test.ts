import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

// 1 s, 1 s, 1 s: four attempts in all, quick enough to watch.
beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s,1s,1s" });
  receiver = await startReceiver();
  await setupApp(sys, ["job.finished"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

describe("retries", () => {
  it("retry on schedule through retrying until an attempt succeeds", async () => {
    receiver.on("/flaky", (_req, n) => (n <= 2 ? { status: 500, body: `boom ${n}` } : { status: 200 }));
    const ep = await f.endpoint("/flaky");
    const eventId = await f.send("job.finished");

    await expect.poll(() => f.status(eventId, ep), { timeout: 10_000 }).toBe("retrying");
    const retrying = (await f.delivery(eventId, ep))!;
    expect(retrying.attempts).toBeGreaterThanOrEqual(1);
    expect(retrying.next_attempt_at).not.toBeNull();

    await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("succeeded");
    const requests = receiver.received("/flaky");
    expect(requests).toHaveLength(3);
    // Every retry carries the same webhook-id: the event's.
    expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([eventId]));
    // Scheduled 1 s apart; the tolerance covers the broker's TTL sweep and the handling.
    for (const gap of gaps(requests.map((r) => r.at))) {
      expect(gap).toBeGreaterThanOrEqual(950);
      expect(gap).toBeLessThan(4000);
    }
    const attempts = await f.attempts(`event=${eventId}&endpoint=${ep}`);
    expect(attempts.map((a) => [a.attempt_number, a.status, a.response_status])).toEqual([
      [3, "succeeded", 200],
      [2, "failed", 500],
      [1, "failed", 500],
    ]);
    expect(attempts[2]).toMatchObject({ error: "http_error" });
    expect(await f.delivery(eventId, ep)).toMatchObject({
      status: "succeeded",
      attempts: 3,
      next_attempt_at: null,
    });
  });

  it("stop at the end of the schedule, leaving the delivery failed", async () => {
    receiver.on("/down", { status: 503, body: "down" });
    const ep = await f.endpoint("/down");
    const eventId = await f.send("job.finished");
    await expect.poll(() => f.status(eventId, ep), { timeout: 20_000 }).toBe("failed");
    expect(await f.delivery(eventId, ep)).toMatchObject({
      status: "failed",
      attempts: 4,
      next_attempt_at: null,
    });
    expect(receiver.received("/down")).toHaveLength(4);
    // Nothing more can be sent: no attempt is left pending to come due.
    const attempts = await f.attempts(`event=${eventId}&endpoint=${ep}`);
    expect(attempts.map((a) => a.status)).toEqual(["failed", "failed", "failed", "failed"]);
  });

  it("show an attempt pending while it is in flight", async () => {
    receiver.on("/slow", { status: 200, delayMs: 1500 });
    const ep = await f.endpoint("/slow");
    const eventId = await f.send("job.finished");
    await expect
      .poll(async () => (await f.attempts(`event=${eventId}&endpoint=${ep}&status=pending`)).length, {
        timeout: 10_000,
      })
      .toBe(1);
    expect(await f.status(eventId, ep)).toBe("pending");
    await expect.poll(() => f.status(eventId, ep), { timeout: 10_000 }).toBe("succeeded");
    expect(await f.attempts(`event=${eventId}&endpoint=${ep}&status=pending`)).toEqual([]);
  });

  it("honour Retry-After on a 429 up to the next step", async () => {
    const slow = await startSystem({ RETRY_SCHEDULE: "4s,1s" });
    const r = await startReceiver();
    try {
      await setupApp(slow, ["job.finished"]);
      const g = fixtures(slow, r);
      r.on("/limited", (_req, n) =>
        n === 1 ? { status: 429, headers: { "Retry-After": "1" } } : { status: 200 },
      );
      const ep = await g.endpoint("/limited");
      const eventId = await g.send("job.finished");
      await expect.poll(() => g.status(eventId, ep), { timeout: 10_000 }).toBe("succeeded");
      const [gap] = gaps(r.received("/limited").map((req) => req.at));
      // Retry-After 1 s under a 4 s step: the 1 s tier is used.
      expect(gap).toBeGreaterThanOrEqual(950);
      expect(gap).toBeLessThan(3500);
    } finally {
      await slow.close();
      await r.close();
    }
  });
});

describe("a rollout beside older dispatchers: one event and one outcome a message", () => {
  it("is read as before: a failure schedules its retry, a success ends the delivery", async () => {
    // What an upgrade's rollout runs while dispatchers older than the batched messages remain.
    const single = await startSystem({
      RETRY_SCHEDULE: "1s",
      EVENTS_PER_MESSAGE: "1",
      SENDER_RESULTS_PER_MESSAGE: "1",
    });
    const r = await startReceiver();
    try {
      await setupApp(single, ["job.finished"]);
      const g = fixtures(single, r);
      // What the gateway and the sender publish, by name.
      const published: string[] = [];
      for (const broker of [single.gateway.deps.broker, single.senders[0]!.broker]) {
        const publish = broker.publish.bind(broker);
        broker.publish = (name, ...rest) => {
          published.push(name);
          return publish(name, ...rest);
        };
      }
      r.on("/once", (_req, n) => ({ status: n === 1 ? 500 : 200 }));
      const ep = await g.endpoint("/once");
      const events = await Promise.all([1, 2, 3].map((n) => g.send("job.finished", { n })));
      for (const e of events) await expect.poll(() => g.status(e, ep), { timeout: 15_000 }).toBe("succeeded");
      // The first request failed and was retried; every other went through once.
      expect(r.received("/once")).toHaveLength(4);
      expect(published.sort()).toEqual([
        ...Array(4).fill("attempt.completed.v1"),
        ...Array(3).fill("event.created.v1"),
      ]);
    } finally {
      await single.close();
      await r.close();
    }
  });
});

describe("deleting an endpoint", () => {
  it("drops the pending retry that was due, sends nothing more, and keeps its log", async () => {
    const slow = await startSystem({ RETRY_SCHEDULE: "3s" });
    const r = await startReceiver();
    try {
      await setupApp(slow, ["job.finished"]);
      const g = fixtures(slow, r);
      r.on("/gone", { status: 500 });
      r.on("/witness", (_req, n) => ({ status: n === 1 ? 500 : 200 }));
      const ep = await g.endpoint("/gone");
      const eventId = await g.send("job.finished");
      await expect.poll(() => g.status(eventId, ep), { timeout: 10_000 }).toBe("retrying");
      expect(await g.attempts(`event=${eventId}&status=pending`)).toHaveLength(1);

      expect((await slow.request("DELETE", `/v3/endpoints/${ep}`)).status).toBe(200);
      await expect.poll(() => g.status(eventId, ep), { timeout: 10_000 }).toBe("dropped");
      expect(await g.attempts(`event=${eventId}&status=pending`)).toEqual([]);
      // The witness: a retry scheduled after the dropped one, in the same delay queue, comes due
      // after it; once the witness's retry has arrived, the dropped one would have too.
      const witness = await g.endpoint("/witness");
      const witnessEvent = await g.send("job.finished");
      await expect.poll(() => g.status(witnessEvent, witness), { timeout: 15_000 }).toBe("succeeded");
      expect(r.received("/witness")).toHaveLength(2);
      expect(r.received("/gone")).toHaveLength(1);
      const log = await g.attempts(`endpoint=${ep}`);
      expect(log.map((a) => a.status)).toEqual(["failed"]);
      expect(await g.delivery(eventId, ep)).toMatchObject({
        status: "dropped",
        attempts: 1,
        next_attempt_at: null,
      });
    } finally {
      await slow.close();
      await r.close();
    }
  });
});
