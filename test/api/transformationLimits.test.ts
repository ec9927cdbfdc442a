import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { expectError } from "../support/errors.ts";
import { type Response, startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * The rate of transformations compiled and tried (TRANSFORMATION_RATE_LIMIT_PER_SECOND): each
 * save with one and each try-it costs the gateway's workers a compile, so an account past its
 * rate gets a 429 at `transformation`, while another account, the account's portal sessions,
 * and its requests without a transformation go on.
 */
let gw: TestGateway;
const { open, as } = browserSessions(() => gw);

// 1 a second, bursts of 2: a few requests exhaust it, and it does not refill mid-test.
const RATE = 1;
const SOURCE = "function handler(webhook) {\n  webhook.payload = { ok: true };\n  return webhook;\n}";

beforeAll(async () => {
  gw = await startGateway({ TRANSFORMATION_RATE_LIMIT_PER_SECOND: String(RATE) });
});
afterAll(() => gw.close());

/** An account with app `acme` and one endpoint without a transformation. */
async function account(name: string): Promise<{ key: string; endpoint: string }> {
  const key = await gw.newAccount(name);
  expect((await gw.request("POST", "/v3/apps", { key, json: { uid: "acme", name } })).status).toBe(201);
  const made = await gw.request("POST", "/v3/endpoints", {
    key,
    json: { app: "acme", url: "https://hooks.example.com/in" },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { key, endpoint: made.body.id };
}

/** A portal session of `key`'s app `acme`, opened as the page opens it: its cookie. */
async function portalOf(key: string): Promise<string> {
  const link = await gw.request("POST", "/v3/apps/acme/portal-sessions", { key, json: {} });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  return open(link.body.token);
}

const trySaved = (key: string | null, endpoint: string, options = {}) =>
  gw.request("POST", `/v3/endpoints/${endpoint}/transformation/test`, {
    key,
    json: { transformation: SOURCE, event: { type: "t", data: {} } },
    ...options,
  });

/** Sends `send` until it is refused (a few times past the burst at most): the refusal. */
async function untilRefused(send: () => Promise<Response>): Promise<Response> {
  for (let i = 0; i < RATE * 2 + 10; i++) {
    const res = await send();
    if (res.status !== 200) return res;
  }
  throw new Error("never refused");
}

function expectLimited(res: Response): void {
  expectError(res, 429, { type: "rate_limit_error", code: "rate_limited", param: "transformation" });
  expect(res.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
}

describe("the rate of transformations compiled and tried", () => {
  it("refuses an account's saves past it with 429 rate_limited at transformation, and its try-its", async () => {
    const { key, endpoint } = await account("Saver");
    const save = () =>
      gw.request("POST", `/v3/endpoints/${endpoint}`, { key, json: { transformation: SOURCE } });
    expectLimited(await untilRefused(save));
    expectLimited(await trySaved(key, endpoint));
    const unsaved = await gw.request("POST", "/v3/endpoints/transformation/test", {
      key,
      json: {
        app: "acme",
        url: "https://x.example.com",
        transformation: SOURCE,
        event: { type: "t", data: {} },
      },
    });
    expectLimited(unsaved);
    // Its requests without a transformation go on.
    expect((await gw.request("GET", `/v3/endpoints/${endpoint}`, { key })).status).toBe(200);
    const renamed = await gw.request("POST", `/v3/endpoints/${endpoint}`, {
      key,
      json: { description: "still fine" },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
  });

  it("does not hold one account's rate against another, nor against its own portal sessions", async () => {
    const noisy = await account("Noisy");
    const bystander = await account("Bystander");
    expectLimited(await untilRefused(() => trySaved(noisy.key, noisy.endpoint)));
    const theirs = await trySaved(bystander.key, bystander.endpoint);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    expect(theirs.body.request.body).toBe(JSON.stringify({ ok: true }));

    // A portal session of the noisy account counts apart from it, and runs out apart too.
    const cookie = await portalOf(noisy.key);
    const viaPortal = await trySaved(null, noisy.endpoint, as(cookie));
    expect(viaPortal.status, JSON.stringify(viaPortal.body)).toBe(200);
    expectLimited(await untilRefused(() => trySaved(null, noisy.endpoint, as(cookie))));
    const other = await portalOf(noisy.key);
    expect((await trySaved(null, noisy.endpoint, as(other))).status).toBe(200);
  });

  it("counts no update without a transformation to compile, nor one removing it", async () => {
    const { key, endpoint } = await account("Editor");
    for (let i = 0; i < 10; i++) {
      const update = i % 2 ? { description: `edit ${i}` } : { transformation: null };
      const res = await gw.request("POST", `/v3/endpoints/${endpoint}`, { key, json: update });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    // The whole burst is still there: had any of those counted, it would be spent.
    for (let i = 0; i < RATE * 2; i++) {
      const res = await gw.request("POST", `/v3/endpoints/${endpoint}`, {
        key,
        json: { transformation: SOURCE },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  });
});
