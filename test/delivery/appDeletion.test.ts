import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRows } from "../support/appRows.ts";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * Deleting an app answers at once and hides the app from every read at once; the dispatcher
 * then removes what it held in bounded batches, while attempts to it are still in flight and
 * another app's deliveries go on.
 */
let sys: TestSystem;
let receiver: Receiver;
beforeAll(async () => {
  sys = await startSystem({}, { dispatchers: 2, senders: 1 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await sys.close();
  await receiver.close();
});

const EVENTS = 600;

describe("deleting an app with attempts in flight", () => {
  it("answers 200 at once, hides everything of it, and removes it in the background", async () => {
    const doomed = fixtures(sys, receiver, "doomed");
    const other = fixtures(sys, receiver, "other");
    await setupApp(sys, ["order.paid"], "doomed");
    await setupApp(sys, [], "other");
    // Slow enough that hundreds of attempts are with the sender or queued when the app goes.
    receiver.on("/doomed", { status: 200, delayMs: 50 });
    const endpointId = await doomed.endpoint("/doomed");
    await other.endpoint("/other");
    const events: string[] = [];
    for (let i = 0; i < EVENTS; i += 50)
      events.push(
        ...(await Promise.all(Array.from({ length: 50 }, (_, j) => doomed.send("order.paid", { i: i + j })))),
      );
    const portal = await sys.request("POST", "/v3/apps/doomed/portal-sessions", { json: {} });
    expect(portal.status).toBe(201);
    await expect.poll(() => receiver.received("/doomed").length, { timeout: 10_000 }).toBeGreaterThan(0);
    const appId = (await sys.request("GET", "/v3/apps/doomed")).body.id as string;

    const res = await sys.request("DELETE", "/v3/apps/doomed");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ id: appId, object: "app", deleted: true });

    // Gone from every read at once.
    expect((await sys.request("GET", "/v3/apps/doomed")).status).toBe(404);
    expect((await sys.request("GET", `/v3/apps/${appId}`)).status).toBe(404);
    expect((await sys.request("GET", "/v3/apps")).body.data.map((a: { id: string }) => a.id)).not.toContain(
      appId,
    );
    expect((await sys.request("GET", "/v3/events?app=doomed")).status).toBe(404);
    expect((await sys.request("GET", `/v3/events/${events[0]}`)).status).toBe(404);
    expect((await sys.request("GET", `/v3/endpoints/${endpointId}`)).status).toBe(404);
    expect((await sys.request("GET", `/v3/events?endpoint=${endpointId}`)).status).toBe(404);
    const listed = (await sys.request("GET", "/v3/events?limit=100")).body.data as { app: string }[];
    expect(listed.filter((e) => e.app === appId)).toEqual([]);
    const attempts = (await sys.request("GET", "/v3/attempts?limit=100")).body.data as { app: string }[];
    expect(attempts.filter((a) => a.app === appId)).toEqual([]);
    const stats = (await sys.request("GET", "/v3/stats/attempts?window=1h")).body.data as {
      succeeded: number;
    }[];
    expect(stats.reduce((n, b) => n + b.succeeded, 0)).toBe(0);
    // Its customers' portal links stop working.
    const exchange = await fetch(`${sys.url}/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "herald-page": "portal", origin: sys.url },
      body: JSON.stringify({ token: portal.body.token }),
    });
    expect(exchange.status).toBe(401);
    // Its uid is free again.
    expect((await sys.request("POST", "/v3/apps", { json: { uid: "doomed", name: "Reborn" } })).status).toBe(
      201,
    );

    // Another app's deliveries go on meanwhile: the witness that nothing is held.
    const witness = await other.send("order.paid");
    await expect
      .poll(() => other.deliveries(witness), { timeout: 15_000 })
      .toMatchObject([{ status: "succeeded" }]);

    // In the background, every row of the app goes, the app's last.
    await expect.poll(() => appRows(sys.gateway.deps.pool, appId), { timeout: 30_000 }).toBe(0);
  });
});
