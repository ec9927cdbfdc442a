import type { AddressInfo } from "node:net";
import { idFloor, newId } from "@herald/db";
import { idTime } from "@herald/db/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { expectMatches } from "../support/openapi.ts";
import { type Received, type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Ordered delivery (`ordering: fifo`): one attempt at a time, in the order events were
 * accepted; a failing delivery holds the rest through its retries, then the next goes; replays
 * keep their order; and an event accepted earlier whose fan-out comes late still goes first.
 * The crash cases (a sender killed mid-attempt, a dispatcher restarted) are in orderingCrash.test.ts.
 */
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

/** Each answer waits this long: an attempt sent before the one ahead of it was answered would show. */
const ANSWER_MS = 40;
const POLL = { timeout: 20_000, interval: 100 };

beforeAll(async () => {
  sys = await startSystem({
    RETRY_SCHEDULE: "1s,1s,1s",
    // An event whose publish failed is published by the relay this long after.
    OUTBOX_RELAY_AFTER: "2s",
    OUTBOX_RELAY_INTERVAL: "300ms",
    // Longer than any poll here: a head that waits on a fan-out waits for that fan-out, not the clock.
    FIFO_FAN_OUT_WAIT: "10m",
  });
  receiver = await startReceiver();
  await setupApp(sys, ["ledger.entry"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

const numberOf = (r: Received) => (JSON.parse(r.body) as { data: { n: number } }).data.n;
const sequence = (path: string) => receiver.received(path).map(numberOf);

/** No request of `path` arrived before the one ahead of it had been answered (ANSWER_MS after it arrived). */
function oneAtATime(path: string) {
  const got = receiver.received(path);
  for (let i = 1; i < got.length; i++)
    expect(
      got[i]!.at - got[i - 1]!.at,
      `request ${i} came before ${i - 1} was answered`,
    ).toBeGreaterThanOrEqual(ANSWER_MS);
}

async function sendNumbered(from: number, to: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = from; n <= to; n++) ids.push(await f.send("ledger.entry", { n }));
  return ids;
}

const theApp = () =>
  sys.gateway.deps.prisma.app.findFirstOrThrow({ where: { uid: "acme", deletedAt: null } });

/**
 * Event `id` accepted, with its outbox message, but not published: as when the inline publish
 * failed. The relay publishes it OUTBOX_RELAY_AFTER later.
 */
async function writeUnpublished(id: string, n: number): Promise<void> {
  const { outbox, events } = sys.gateway.deps;
  const app = await theApp();
  const at = new Date(idTime(id));
  const message = outbox.message("event.created.v1", {
    event_id: id,
    account_id: app.accountId,
    app_id: app.id,
    type: "ledger.entry",
    created_at: at.toISOString(),
  });
  await events.write({
    id,
    accountId: app.accountId,
    appId: app.id,
    type: "ledger.entry",
    data: JSON.stringify({ n }),
    dataBytes: JSON.stringify({ n }).length,
    traceContext: null,
    createdAt: at,
    message: {
      name: message.name,
      messageId: message.messageId,
      payload: JSON.stringify(message.payload),
      headers: "{}",
    },
  });
}

async function dispatcherMetric(name: string): Promise<number> {
  const port = (sys.dispatchers[0]!.healthServer()!.address() as AddressInfo).port;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m"))?.[1] ?? 0);
}

async function endpointState(id: string) {
  const res = await sys.request("GET", `/v3/endpoints/${id}`);
  expect(res.status).toBe(200);
  expectMatches(res.body, "Endpoint");
  return res.body.delivery_state;
}

describe("ordering: fifo", () => {
  it("takes `ordering`, defaults to none, and refuses anything else with its param", async () => {
    const plain = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `${receiver.url}/plain` },
    });
    expect(plain.body.ordering).toBe("none");
    const bad = await sys.request("POST", `/v3/endpoints/${plain.body.id}`, { json: { ordering: "lifo" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("ordering");
    const fifo = await sys.request("POST", `/v3/endpoints/${plain.body.id}`, { json: { ordering: "fifo" } });
    expect(fifo.body.ordering).toBe("fifo");
    await sys.request("DELETE", `/v3/endpoints/${plain.body.id}`);
  });

  it("sends one at a time in acceptance order; a failing one holds the rest through its retries", async () => {
    // Event 2 fails twice at both endpoints; the unordered one goes on without it.
    const answer = (r: Received) => {
      const n = numberOf(r);
      const tries = receiver.received(r.path).filter((x) => numberOf(x) === n).length;
      return n === 2 && tries <= 2
        ? { status: 500, delayMs: ANSWER_MS }
        : { status: 200, delayMs: ANSWER_MS };
    };
    receiver.on("/fifo", answer);
    receiver.on("/any", answer);
    const fifo = await f.endpoint("/fifo", { ordering: "fifo" });
    await f.endpoint("/any");
    const events = await sendNumbered(1, 6);

    // While event 2 waits for its retry, the others are held behind it, and the API says so.
    await expect
      .poll(async () => {
        const s = await endpointState(fifo);
        return s.reason === "ordering" && s.held_behind.attempts >= 1
          ? [s.held_behind.event, s.held_behind.waiting]
          : null;
      }, POLL)
      .toEqual([events[1], 4]);
    const held = await endpointState(fifo);
    expect(held.state).toBe("throttled");
    expect(held.held_behind.last_response_status).toBe(500);
    expect(held.description).toContain(events[1]);

    await expect.poll(() => sequence("/fifo").length, POLL).toBe(8);
    expect(sequence("/fifo")).toEqual([1, 2, 2, 2, 3, 4, 5, 6]);
    oneAtATime("/fifo");
    for (const id of events) await expect.poll(() => f.status(id, fifo), POLL).toBe("succeeded");
    await expect.poll(async () => (await endpointState(fifo)).state, POLL).toBe("active");

    // Without ordering, event 3 did not wait for event 2's retries.
    await expect.poll(() => sequence("/any").length, POLL).toBe(8);
    const any = sequence("/any");
    expect(any.indexOf(3)).toBeLessThan(any.lastIndexOf(2));
  });

  it("lets the next go once the one ahead fails for good", async () => {
    receiver.on("/stuck", (r) => (numberOf(r) === 1 ? { status: 503 } : { status: 200, delayMs: ANSWER_MS }));
    const ep = await f.endpoint("/stuck", { ordering: "fifo" });
    const events = await sendNumbered(1, 3);
    await expect.poll(() => sequence("/stuck").length, POLL).toBe(6);
    // Four attempts of event 1 (the schedule: 1 s, 1 s, 1 s), then the others.
    expect(sequence("/stuck")).toEqual([1, 1, 1, 1, 2, 3]);
    expect(await f.status(events[0]!, ep)).toBe("failed");
    for (const id of events.slice(1)) await expect.poll(() => f.status(id, ep), POLL).toBe("succeeded");
  });

  it("replays to a fifo endpoint in the events' order, one at a time", async () => {
    // Failed for good first, unordered (quicker), then made fifo and replayed once it answers.
    let up = false;
    receiver.on("/replayed", () => (up ? { status: 200, delayMs: ANSWER_MS } : { status: 500 }));
    const ep = await f.endpoint("/replayed");
    const events = await sendNumbered(1, 5);
    for (const id of events) await expect.poll(() => f.status(id, ep), POLL).toBe("failed");
    const changed = await sys.request("POST", `/v3/endpoints/${ep}`, { json: { ordering: "fifo" } });
    expect(changed.body.ordering).toBe("fifo");
    up = true;
    const mark = receiver.received("/replayed").length;
    const replay = await sys.request("POST", `/v3/endpoints/${ep}/replay`, { json: {} });
    expect(replay.status).toBe(202);
    expect(replay.body.queued).toBe(5);
    for (const id of events) await expect.poll(() => f.status(id, ep), POLL).toBe("succeeded");
    const replayed = receiver.received("/replayed").slice(mark);
    expect(replayed.map(numberOf)).toEqual([1, 2, 3, 4, 5]);
    for (let i = 1; i < replayed.length; i++)
      expect(replayed[i]!.at - replayed[i - 1]!.at).toBeGreaterThanOrEqual(ANSWER_MS);
  });

  it("sends a replayed earlier event only once the later one in flight is answered", async () => {
    // Event 1 fails for good; event 2 then goes, and is answered slowly. Event 1, replayed while
    // 2 is in flight, becomes the head: it waits for 2's answer, not for nothing.
    const SLOW_MS = 2500;
    let up = false;
    receiver.on("/overtaken", (r) => {
      if (numberOf(r) === 1) return up ? { status: 200 } : { status: 500 };
      return { status: 200, delayMs: SLOW_MS };
    });
    const ep = await f.endpoint("/overtaken", { ordering: "fifo" });
    const [first] = await sendNumbered(1, 1);
    await expect.poll(() => f.status(first!, ep), POLL).toBe("failed");
    up = true;
    const [second] = await sendNumbered(2, 2);
    await expect.poll(() => sequence("/overtaken").includes(2), POLL).toBe(true);
    const replay = await sys.request("POST", `/v3/endpoints/${ep}/replay`, { json: { event: first } });
    expect(replay.body.queued).toBe(1);
    // While 2 is in flight, the API says the queue is held behind event 1's replay.
    await expect
      .poll(
        async () => {
          const s = await endpointState(ep);
          return s.reason === "ordering" && s.held_behind.event === first && !s.held_behind.in_flight;
        },
        { timeout: SLOW_MS - 500, interval: 50 },
      )
      .toBe(true);

    await expect.poll(() => f.status(first!, ep), POLL).toBe("succeeded");
    expect(await f.status(second!, ep)).toBe("succeeded");
    const got = receiver.received("/overtaken");
    expect(got.map(numberOf)).toEqual([1, 1, 1, 1, 2, 1]);
    expect(got[5]!.at - got[4]!.at, "the replay went while 2 was in flight").toBeGreaterThanOrEqual(SLOW_MS);
  });

  it("holds a later event until an earlier one's late fan-out, then sends the earlier first", async () => {
    receiver.on("/late", { status: 200, delayMs: ANSWER_MS });
    const ep = await f.endpoint("/late", { ordering: "fifo" });
    const earlier = newId("event");
    await writeUnpublished(earlier, 1);
    const [later] = await sendNumbered(2, 2);

    // The later one is fanned out at once, and held: the earlier one's fan-out is awaited.
    await expect.poll(() => f.status(later!, ep), POLL).toBe("pending");
    await expect.poll(async () => (await endpointState(ep)).held_behind?.awaiting_fan_out, POLL).toBe(true);
    const state = await endpointState(ep);
    expect(state.reason).toBe("ordering");
    expect(state.held_behind.event).toBe(later);
    expect(sequence("/late")).toEqual([]);

    await expect.poll(() => sequence("/late").length, POLL).toBe(2);
    expect(sequence("/late")).toEqual([1, 2]);
    expect(await f.status(earlier, ep)).toBe("succeeded");
    await expect.poll(() => f.status(later!, ep), POLL).toBe("succeeded");
  });

  it("waits only on the fan-out of an event of a type the endpoint takes", async () => {
    receiver.on("/typed", { status: 200 });
    receiver.on("/every-type", { status: 200 });
    const typed = await f.endpoint("/typed", { ordering: "fifo", event_types: ["ledger.entry"] });
    const everyType = await f.endpoint("/every-type", { ordering: "fifo" });
    const { pool } = sys.gateway.deps;
    const app = await theApp();
    // Accepted earlier, of another type, and its fan-out not yet come (no outbox message: it never will).
    const other = newId("event");
    await pool.query(
      "INSERT INTO events (id, account_id, app_id, type, data) VALUES ($1, $2, $3, 'ledger.closed', '{}')",
      [other, app.accountId, app.id],
    );
    const [later] = await sendNumbered(7, 7);

    // The endpoint of ledger.entry alone receives it; the one of every type waits for that fan-out.
    await expect.poll(() => f.status(later!, typed), POLL).toBe("succeeded");
    await expect
      .poll(async () => (await endpointState(everyType)).held_behind?.awaiting_fan_out, POLL)
      .toBe(true);
    expect(sequence("/every-type")).toEqual([]);
    // Fanned out, to no endpoint (as fan-out marks an event no endpoint takes): the wait ends.
    await pool.query("UPDATE events SET fanned_out_at = now() WHERE id = $1", [other]);
    await expect.poll(() => f.status(later!, everyType), POLL).toBe("succeeded");
    expect(sequence("/every-type")).toEqual([7]);
  });

  it("delivers an event whose fan-out came after the wait behind newer ones, and counts it", async () => {
    receiver.on("/overdue", { status: 200 });
    const ep = await f.endpoint("/overdue", { ordering: "fifo" });
    const [later] = await sendNumbered(8, 8);
    await expect.poll(() => f.status(later!, ep), POLL).toBe("succeeded");
    // Accepted 11 minutes ago, past FIFO_FAN_OUT_WAIT, and fanned out only now (by the relay).
    const overdue = idFloor("event", Date.now() - 11 * 60_000);
    const app = await theApp();
    // Every fifo endpoint of the app already sent a later event gets it out of order.
    const { rows } = await sys.gateway.deps.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM endpoint_flows fl JOIN endpoints ep ON ep.id = fl.endpoint_id
       WHERE ep.app_id = $1 AND ep.ordering = 'fifo' AND ep.deleted_at IS NULL AND NOT ep.disabled
         AND fl.fifo_after > $2`,
      [app.id, overdue],
    );
    expect(rows[0]!.n).toBeGreaterThanOrEqual(1);
    const before = await dispatcherMetric("herald_fifo_out_of_order_total");
    await writeUnpublished(overdue, 0);

    await expect.poll(() => f.status(overdue, ep), POLL).toBe("succeeded");
    expect(sequence("/overdue")).toEqual([8, 0]);
    await expect
      .poll(() => dispatcherMetric("herald_fifo_out_of_order_total"), POLL)
      .toBe(before + rows[0]!.n);
  });
});
