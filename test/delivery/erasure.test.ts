import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError } from "../support/errors.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

// RETRY_SCHEDULE "3s": a failing delivery is `retrying` for 3 s, long enough to erase its event.
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "3s" });
  receiver = await startReceiver();
  await setupApp(sys, ["user.signed_up"]);
  f = fixtures(sys, receiver);
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

/** What the receiver got at `path` for this event (every endpoint of the app receives every event). */
const sentFor = (path: string, eventId: string) =>
  receiver.received(path).filter((r) => r.headers["webhook-id"] === eventId);

describe("erasing an event's payload", () => {
  it("blanks it for good, drops the pending retry, and keeps the event, its deliveries and attempts", async () => {
    receiver.on("/ok", { status: 200 });
    receiver.on("/down", { status: 500 });
    receiver.on("/witness", (_req, n) => ({ status: n === 1 ? 500 : 200 }));
    const ok = await f.endpoint("/ok");
    const down = await f.endpoint("/down");
    const eventId = await f.send("user.signed_up", { email: "ada@example.com" });
    await expect.poll(() => f.status(eventId, down), { timeout: 10_000 }).toBe("retrying");
    await expect.poll(() => f.status(eventId, ok), { timeout: 10_000 }).toBe("succeeded");

    const erased = await sys.request("DELETE", `/v3/events/${eventId}/data`);
    expect(erased.status, JSON.stringify(erased.body)).toBe(200);
    expect(erased.body).toMatchObject({ id: eventId, type: "user.signed_up", data: {} });
    expect(Date.parse(erased.body.data_erased_at)).not.toBeNaN();
    expect(JSON.stringify((await sys.request("GET", `/v3/events/${eventId}`)).body)).not.toContain("ada@");
    // Erasing again changes nothing: the first erasure's time stays.
    const again = await sys.request("DELETE", `/v3/events/${eventId}/data`);
    expect(again.body.data_erased_at).toBe(erased.body.data_erased_at);

    await expect.poll(() => f.status(eventId, down), { timeout: 10_000 }).toBe("dropped");
    expect(await f.status(eventId, ok)).toBe("succeeded");
    expect(await f.attempts(`event=${eventId}&status=pending`)).toEqual([]);
    // A retry scheduled after the dropped one, in the same delay queue, comes due after it:
    // once the witness's retry has arrived, the dropped one would have too.
    const witness = await f.endpoint("/witness");
    const witnessEvent = await f.send("user.signed_up");
    await expect.poll(() => f.status(witnessEvent, witness), { timeout: 15_000 }).toBe("succeeded");
    expect(sentFor("/down", eventId)).toHaveLength(1);

    // The log stays; an attempt's request no longer shows the payload.
    const log = await f.attempts(`event=${eventId}`);
    expect(log.map((a) => a.status).sort()).toEqual(["failed", "succeeded"]);
    const attempt = await sys.request("GET", `/v3/attempts/${log[0]!.id}`);
    expect(attempt.body.request.body).toBeNull();
    expect(attempt.body.request.headers["webhook-id"]).toBe(eventId);
  }, 40_000);

  it("is never delivered or replayed again", async () => {
    receiver.on("/failing", { status: 500 });
    const ep = await f.endpoint("/failing");
    const eventId = await f.send("user.signed_up", { email: "bob@example.com" });
    // 2 attempts, 3 s apart, then `failed`: what a replay would take.
    await expect.poll(() => f.status(eventId, ep), { timeout: 15_000 }).toBe("failed");
    expect((await sys.request("DELETE", `/v3/events/${eventId}/data`)).status).toBe(200);
    receiver.on("/failing", { status: 200 });
    for (const body of [{}, { event: eventId }]) {
      const replay = await sys.request("POST", `/v3/endpoints/${ep}/replay`, { json: body });
      expect(replay.status, JSON.stringify(replay.body)).toBe(202);
      expect(replay.body.queued, JSON.stringify(body)).toBe(0);
    }
    expect(await f.status(eventId, ep)).toBe("failed");
    expect(sentFor("/failing", eventId)).toHaveLength(2);
  }, 30_000);

  it("answers in the API's error format for an unknown event, and is not the portal's to do", async () => {
    const missing = { type: "invalid_request_error", code: "resource_missing", param: "id" };
    expectError(await sys.request("DELETE", "/v3/events/evt_nope/data"), 404, missing);
    const other = await sys.newAccount("Other");
    const eventId = await f.send("user.signed_up");
    expectError(await sys.request("DELETE", `/v3/events/${eventId}/data`, { key: other }), 404, missing);
    const { token } = (await sys.request("POST", "/v3/apps/acme/portal-sessions", { json: {} })).body;
    const session = await sys.request("POST", "/session", {
      key: null,
      headers: { "herald-page": "portal" },
      json: { token },
    });
    const portal = {
      key: null,
      headers: { cookie: session.headers.get("set-cookie")!.split(";")[0]!, "herald-page": "portal" },
    };
    expect((await sys.request("DELETE", `/v3/events/${eventId}/data`, portal)).status).toBe(403);
    expect((await sys.request("GET", `/v3/events/${eventId}`)).body.data_erased_at).toBeNull();
  });
});
