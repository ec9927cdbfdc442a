import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Webhook } from "standardwebhooks";
import { expect } from "vitest";
import { fixtures, setupApp } from "./fixtures.ts";
import { openapi } from "./openapi.ts";
import { type Receiver, startReceiver } from "./receiver.ts";
import { startSystem, type TestSystem } from "./system.ts";

/**
 * What the tests of operational webhooks share: a system whose retries run out after two (1 s
 * apart) and whose breaker opens at the second unreachable attempt (probing after 1 s), an app
 * taking `order.placed`, the account's operational endpoint on a receiver, and helpers to read
 * what that endpoint was told and what notices were stored.
 */
export type Told = { type: string; timestamp: string; data: Record<string, unknown> & { endpoint: string } };
export type Stored = Told & { id: string };

export type OperationalSystem = {
  sys: TestSystem;
  receiver: Receiver;
  f: ReturnType<typeof fixtures>;
  /** The operational endpoint, at the receiver's `/ops`, and the app it was made in. */
  opsEndpoint: string;
  opsApp: string;
  /** What the operational endpoint was told, each verified with the standardwebhooks package. */
  told(): Told[];
  toldOf(type: string, endpoint: string): Told[];
  /** The first notice of `type` about `endpoint` the operational endpoint is told. */
  waitTold(type: string, endpoint: string): Promise<Told>;
  /** The notices stored about an endpoint (written in the transaction of the change, so complete at once). */
  storedAbout(endpoint: string, type?: string): Promise<Stored[]>;
  /**
   * Waits until every notice stored about `endpoint` (of `type`) has been delivered to the
   * operational endpoint. Then `told` holds all it will ever be told of them: a delivery that
   * ended is attempted no more, and the receiver records a request before it answers. Call it
   * once every change that could store one is known to have committed.
   */
  waitAllTold(endpoint: string, type: string): Promise<void>;
  /** A notice's body against its type's schema in the OpenAPI document's `webhooks`. */
  expectDocumented(notice: Told): void;
  close(): Promise<void>;
};

const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);

function expectDocumented(notice: Told): void {
  const hook = (
    openapi.webhooks as Record<
      string,
      { post: { requestBody: { content: Record<string, { schema: object }> } } }
    >
  )[notice.type];
  expect(hook, notice.type).toBeDefined();
  const validate = ajv.compile(hook!.post.requestBody.content["application/json"]!.schema);
  const ok = validate(notice);
  expect(ok ? [] : validate.errors, JSON.stringify(notice)).toEqual([]);
}

export async function startOperationalSystem(): Promise<OperationalSystem> {
  const sys = await startSystem({
    RETRY_SCHEDULE: "1s,1s",
    ENDPOINT_PROBE_AFTER: "1s",
    ENDPOINT_BREAKER_AFTER: "2",
  });
  const receiver = await startReceiver();
  const f = fixtures(sys, receiver);
  await setupApp(sys, ["order.placed"]);
  const res = await sys.request("POST", "/v3/operational-endpoints", {
    json: { url: `${receiver.url}/ops` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const opsEndpoint: string = res.body.id;
  const opsApp: string = res.body.app;
  const secret = (await sys.request("GET", `/v3/endpoints/${opsEndpoint}/secret`)).body.secret;
  const webhook = new Webhook(secret);

  const told = (): Told[] =>
    receiver.received("/ops").map((r) => {
      const headers = {
        "webhook-id": String(r.headers["webhook-id"]),
        "webhook-timestamp": String(r.headers["webhook-timestamp"]),
        "webhook-signature": String(r.headers["webhook-signature"]),
      };
      return webhook.verify(r.body, headers) as Told;
    });
  const toldOf = (type: string, endpoint: string) =>
    told().filter((t) => t.type === type && t.data.endpoint === endpoint);
  const storedAbout = async (endpoint: string, type?: string): Promise<Stored[]> => {
    const list = await sys.request("GET", `/v3/events?app=${opsApp}&limit=100`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    return (list.body.data as Stored[]).filter(
      (e) => e.data.endpoint === endpoint && (!type || e.type === type),
    );
  };

  return {
    sys,
    receiver,
    f,
    opsEndpoint,
    opsApp,
    told,
    toldOf,
    async waitTold(type, endpoint) {
      await expect
        .poll(() => toldOf(type, endpoint).length, { timeout: 20_000, interval: 200 })
        .toBeGreaterThan(0);
      return toldOf(type, endpoint)[0]!;
    },
    storedAbout,
    async waitAllTold(endpoint, type) {
      await expect
        .poll(
          async () => {
            const undelivered: string[] = [];
            for (const n of await storedAbout(endpoint, type))
              if ((await f.status(n.id, opsEndpoint)) !== "succeeded") undelivered.push(n.id);
            return undelivered;
          },
          { timeout: 20_000, interval: 200 },
        )
        .toEqual([]);
    },
    expectDocumented,
    async close() {
      await sys.close();
      await receiver.close();
    },
  };
}
