import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectMatches } from "../support/openapi.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// One retry after 1 s: a delivery that keeps failing is `failed` after 2 attempts.
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

type Delivery = {
  endpoint: string;
  status: string;
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
};

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  receiver = await startReceiver();
  await setupApp(sys, ["order.a", "order.b"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

async function delivery(eventId: string, endpointId: string): Promise<Delivery | undefined> {
  const res = await sys.request("GET", `/v3/events/${eventId}`);
  expect(res.status).toBe(200);
  return (res.body.deliveries as Delivery[]).find((d) => d.endpoint === endpointId);
}

/** Status and attempt count, for polling. */
async function state(eventId: string, endpointId: string): Promise<string> {
  const d = await delivery(eventId, endpointId);
  return d ? `${d.status}/${d.attempts}` : "none";
}

async function replay(endpointId: string, body: Record<string, unknown> = {}) {
  const res = await sys.request("POST", `/v3/endpoints/${endpointId}/replay`, { json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expectMatches(res.body, "Replay");
  expect(res.body.object).toBe("replay");
  expect(res.body.endpoint).toBe(endpointId);
  expect(res.body.id).toMatch(/^rpl_/);
  return res.body as { id: string; queued: number; status: string; completed_at: string | null };
}

async function replayStatus(id: string) {
  const res = await sys.request("GET", `/v3/replays/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expectMatches(res.body, "Replay");
  return res.body as { id: string; status: string; queued: number; completed_at: string | null };
}

const ids = (path: string, from: number) =>
  receiver
    .received(path)
    .slice(from)
    .map((r) => String(r.headers["webhook-id"]));

const POLL = { timeout: 20_000 };
const SLOW = { timeout: 60_000 };

describe("replay", () => {
  let epA: string;
  const eventsA: string[] = [];

  it("fails three deliveries after the schedule runs out", SLOW, async () => {
    receiver.on("/a", { status: 500, body: "down" });
    epA = await f.endpoint("/a", { event_types: ["order.a"] });
    for (let i = 1; i <= 3; i++) eventsA.push(await f.send("order.a", { n: i }));
    for (const e of eventsA) await expect.poll(() => state(e, epA), POLL).toBe("failed/2");
    expect(receiver.received("/a")).toHaveLength(6);
  });

  it("previews what a replay would take, queuing nothing", SLOW, async () => {
    const preview = async (query = "") => {
      const res = await sys.request("GET", `/v3/endpoints/${epA}/replay/preview${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expectMatches(res.body, "ReplayPreview");
      return res.body as { count: number; deliveries: { event: string; event_type: string }[] };
    };
    const all = await preview();
    expect(all).toMatchObject({
      object: "replay_preview",
      endpoint: epA,
      count: 3,
      count_capped: false,
      has_more: false,
    });
    expect(all.deliveries.map((d) => d.event)).toEqual(eventsA);
    expect(all.deliveries.every((d) => d.event_type === "order.a")).toBe(true);
    expect((await preview(`?event=${eventsA[1]}`)).deliveries.map((d) => d.event)).toEqual([eventsA[1]]);
    expect((await preview(`?since=${new Date(Date.now() + 60_000).toISOString()}`)).count).toBe(0);
    // Nothing was claimed: the same three are still there to replay.
    expect((await preview()).count).toBe(3);
    // Not a time, or one PostgreSQL does not take (year 0, year 10000 as unix seconds): a 400.
    for (const since of ["yesterday", "0000-01-01T00:00:00.000Z", "253402300800"]) {
      const bad = await sys.request("GET", `/v3/endpoints/${epA}/replay/preview?since=${since}`);
      expect(bad.status, since).toBe(400);
      expect(bad.body.error.param).toBe("since");
      const replay = await sys.request("POST", `/v3/endpoints/${epA}/replay`, { json: { since } });
      expect(replay.status, since).toBe(400);
    }
    const unknown = await sys.request("GET", `/v3/endpoints/${epA}/replay/preview?event=evt_nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe("event");
  });

  it("replays one event: only that event is sent again, and succeeds on attempt 3", SLOW, async () => {
    receiver.on("/a", { status: 200 });
    const mark = receiver.received("/a").length;
    const [e1, e2, e3] = eventsA as [string, string, string];

    const r = await replay(epA, { event: e2 });
    expect(r.queued).toBe(1);
    expect(r.status).toBe("queued");
    expect(r.completed_at).toBeNull();

    await expect.poll(() => state(e2, epA), POLL).toBe("succeeded/3");
    await expect.poll(async () => (await replayStatus(r.id)).status, POLL).toBe("completed");
    expect(ids("/a", mark)).toEqual([e2]);
    expect(await state(e1, epA)).toBe("failed/2");
    expect(await state(e3, epA)).toBe("failed/2");
    // `queued` is the exact number tried: one attempt made by this replay.
    expect(await sys.gateway.deps.prisma.attempt.count({ where: { replayId: r.id } })).toBe(1);
  });

  it(
    "replays with `since`: only deliveries whose last failure was at or after it (ISO and unix seconds)",
    SLOW,
    async () => {
      receiver.on("/b", { status: 500, body: "down" });
      const epB = await f.endpoint("/b", { event_types: ["order.b"] });
      // One at a time, each failed before the next is sent: their last failures are far apart.
      const eventsB: string[] = [];
      for (let i = 1; i <= 4; i++) {
        const e = await f.send("order.b", { n: i });
        eventsB.push(e);
        await expect.poll(() => state(e, epB), POLL).toBe("failed/2");
      }
      const lastFailure: number[] = [];
      for (const e of eventsB) lastFailure.push(Date.parse((await delivery(e, epB))!.last_attempt_at!));
      for (let i = 1; i < 4; i++) expect(lastFailure[i]!).toBeGreaterThan(lastFailure[i - 1]!);

      receiver.on("/b", { status: 200 });
      const mark = receiver.received("/b").length;
      // Between the 2nd and 3rd failures, as ISO 8601: the 3rd and 4th are queued.
      const since = new Date((lastFailure[1]! + lastFailure[2]!) / 2).toISOString();
      const r = await replay(epB, { since });
      expect(r.queued).toBe(2);
      for (const e of eventsB.slice(2)) await expect.poll(() => state(e, epB), POLL).toBe("succeeded/3");
      await expect.poll(async () => (await replayStatus(r.id)).status, POLL).toBe("completed");
      expect(ids("/b", mark)).toEqual(eventsB.slice(2));
      for (const e of eventsB.slice(0, 2)) expect(await state(e, epB)).toBe("failed/2");

      // Unix seconds: the first whole second after the 1st failure (the 2nd failed a second or more later).
      const sinceSeconds = Math.ceil(lastFailure[0]! / 1000);
      const expected = eventsB.slice(0, 2).filter((_, i) => lastFailure[i]! >= sinceSeconds * 1000);
      expect(expected).toContain(eventsB[1]);
      const mark2 = receiver.received("/b").length;
      const r2 = await replay(epB, { since: sinceSeconds });
      expect(r2.queued).toBe(expected.length);
      for (const e of expected) await expect.poll(() => state(e, epB), POLL).toBe("succeeded/3");
      await expect.poll(async () => (await replayStatus(r2.id)).status, POLL).toBe("completed");
      expect(ids("/b", mark2)).toEqual(expected);
    },
  );

  it("replays everything failed, oldest first, and reports the replay completed", SLOW, async () => {
    const [e1, , e3] = eventsA as [string, string, string];
    const mark = receiver.received("/a").length;

    const r = await replay(epA);
    expect(r.queued).toBe(2);
    for (const e of [e1, e3]) await expect.poll(() => state(e, epA), POLL).toBe("succeeded/3");
    await expect.poll(async () => (await replayStatus(r.id)).status, POLL).toBe("completed");
    const done = await replayStatus(r.id);
    expect(done.queued).toBe(2);
    expect(done.completed_at).not.toBeNull();
    expect(Date.parse(done.completed_at!)).not.toBeNaN();
    // Arrival order is send order: the oldest event first.
    expect(ids("/a", mark)).toEqual([e1, e3]);
    expect(await sys.gateway.deps.prisma.attempt.count({ where: { replayId: r.id } })).toBe(2);
  });

  it("replaying when nothing is failed queues nothing and is completed at once", SLOW, async () => {
    const mark = receiver.received("/a").length;
    const r = await replay(epA);
    expect(r.queued).toBe(0);
    expect(r.status).toBe("completed");
    expect(r.completed_at).not.toBeNull();
    const again = await replayStatus(r.id);
    expect(again.status).toBe("completed");
    expect(again.queued).toBe(0);
    // The same through a form body, `since` in unix seconds as the form sends it (a string).
    const form = await sys.request("POST", `/v3/endpoints/${epA}/replay`, {
      form: { since: Math.floor(Date.now() / 1000) - 3600 },
    });
    expect(form.status, JSON.stringify(form.body)).toBe(202);
    expect(form.body.queued).toBe(0);
    expect(form.body.status).toBe("completed");
    expect(receiver.received("/a")).toHaveLength(mark);
  });

  it("keeps the whole attempt history of a replayed delivery", SLOW, async () => {
    const e1 = eventsA[0]!;
    const attempts = (await f.attempts(`event=${e1}&endpoint=${epA}`)).sort(
      (a, b) => a.attempt_number - b.attempt_number,
    );
    expect(attempts.map((a) => [a.attempt_number, a.status, a.response_status])).toEqual([
      [1, "failed", 500],
      [2, "failed", 500],
      [3, "succeeded", 200],
    ]);
  });
});
