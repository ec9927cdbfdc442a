import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectMatches } from "../support/openapi.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// Six attempts 1 s apart would take 5 s; an endpoint failing for 2 s is disabled well before.
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem({ ENDPOINT_DISABLE_AFTER: "2s", RETRY_SCHEDULE: "1s,1s,1s,1s,1s" });
  receiver = await startReceiver();
  await setupApp(sys, ["job.done", "job.other"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

type Endpoint = { id: string; disabled: boolean; disabled_reason: string | null; updated_at: string };

async function getEndpoint(id: string): Promise<Endpoint> {
  const res = await sys.request("GET", `/v3/endpoints/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expectMatches(res.body, "Endpoint");
  return res.body;
}

async function failingSince(id: string): Promise<Date | null> {
  const row = await sys.gateway.deps.prisma.endpoint.findUniqueOrThrow({ where: { id } });
  return row.failingSince;
}

async function delivery(eventId: string, endpointId: string) {
  return (await f.deliveries(eventId)).find((d) => d.endpoint === endpointId);
}

const POLL = { timeout: 25_000 };
const SLOW = { timeout: 60_000 };

describe("automatic disabling", () => {
  let broken: string;
  let flaky: string;
  const brokenEvents: string[] = [];

  it("disables an endpoint whose every attempt failed for ENDPOINT_DISABLE_AFTER", SLOW, async () => {
    receiver.on("/broken", { status: 500, body: "down" });
    receiver.on("/flaky", (_req, n) => (n === 1 ? { status: 500, body: "blip" } : { status: 200 }));
    broken = await f.endpoint("/broken", { event_types: ["job.done"] });
    flaky = await f.endpoint("/flaky", { event_types: ["job.done"] });

    brokenEvents.push(await f.send("job.done", { n: 1 }));
    await expect.poll(() => receiver.received("/broken").length, POLL).toBeGreaterThanOrEqual(1);
    await expect.poll(() => failingSince(broken), POLL).not.toBeNull();
    // A second delivery half a step behind: a retry of it comes due after the endpoint is disabled.
    await new Promise((r) => setTimeout(r, 500));
    brokenEvents.push(await f.send("job.done", { n: 2 }));

    await expect.poll(async () => (await getEndpoint(broken)).disabled, POLL).toBe(true);
    const ep = await getEndpoint(broken);
    expect(ep.disabled_reason).toBeTruthy();
    expect(ep.disabled_reason).toMatch(/fail/i);

    // Both deliveries end `failed`, before the schedule ran out (6 attempts).
    for (const e of brokenEvents) {
      await expect.poll(async () => (await delivery(e, broken))?.status, POLL).toBe("failed");
      const d = (await delivery(e, broken))!;
      expect(d.attempts).toBeGreaterThanOrEqual(1);
      expect(d.attempts).toBeLessThan(6);
      expect(d.next_attempt_at).toBeNull();
    }
    // Nothing is left pending, and the receiver got exactly the attempts recorded: no retry
    // that came due after disabling was sent.
    const attempts = await f.attempts(`endpoint=${broken}`);
    expect(attempts.filter((a) => a.status === "pending")).toEqual([]);
    expect(attempts.every((a) => a.status === "failed")).toBe(true);
    let recorded = 0;
    for (const e of brokenEvents) recorded += (await delivery(e, broken))!.attempts;
    expect(attempts).toHaveLength(recorded);
    expect(receiver.received("/broken")).toHaveLength(recorded);
    const disabledAt = Date.parse(ep.updated_at);
    for (const r of receiver.received("/broken")) expect(r.at).toBeLessThanOrEqual(disabledAt + 50);
  });

  it("resets the failure clock on a success: an endpoint that failed once stays enabled", SLOW, async () => {
    // The flaky endpoint got the same first event: 500 once, then 200 on the retry.
    await expect.poll(async () => (await delivery(brokenEvents[0]!, flaky))?.status, POLL).toBe("succeeded");
    expect((await delivery(brokenEvents[0]!, flaky))!.attempts).toBe(2);
    await expect.poll(() => failingSince(flaky), POLL).toBeNull();
    const ep = await getEndpoint(flaky);
    expect(ep.disabled).toBe(false);
    expect(ep.disabled_reason).toBeNull();
  });

  it("fans new events out only to enabled endpoints", SLOW, async () => {
    const flakyBefore = receiver.received("/flaky").length;
    const brokenBefore = receiver.received("/broken").length;
    const e = await f.send("job.done", { n: 3 });
    await expect.poll(async () => (await delivery(e, flaky))?.status, POLL).toBe("succeeded");
    expect((await f.deliveries(e)).map((d) => d.endpoint)).toEqual([flaky]);
    expect(receiver.received("/flaky")).toHaveLength(flakyBefore + 1);
    expect(receiver.received("/broken")).toHaveLength(brokenBefore);
  });

  it("refuses to replay a disabled endpoint", SLOW, async () => {
    const res = await sys.request("POST", `/v3/endpoints/${broken}/replay`, { json: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe("endpoint_disabled");
  });

  it(
    "re-enabling clears the reason and the failure clock, and the endpoint receives again",
    SLOW,
    async () => {
      const res = await sys.request("POST", `/v3/endpoints/${broken}`, { json: { disabled: false } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expectMatches(res.body, "Endpoint");
      expect(res.body.disabled).toBe(false);
      expect(res.body.disabled_reason).toBeNull();
      expect((await getEndpoint(broken)).disabled_reason).toBeNull();
      expect(await failingSince(broken)).toBeNull();

      receiver.on("/broken", { status: 200 });
      const e = await f.send("job.done", { n: 4 });
      await expect.poll(async () => (await delivery(e, broken))?.status, POLL).toBe("succeeded");
      // Its failed deliveries can be replayed now.
      const replay = await sys.request("POST", `/v3/endpoints/${broken}/replay`, { json: {} });
      expect(replay.status, JSON.stringify(replay.body)).toBe(202);
      expect(replay.body.queued).toBe(brokenEvents.length);
      for (const id of brokenEvents)
        await expect.poll(async () => (await delivery(id, broken))?.status, POLL).toBe("succeeded");
    },
  );
});
