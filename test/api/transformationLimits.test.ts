import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions } from "../support/browserSessions.ts";
import { expectError } from "../support/errors.ts";
import { type Response, startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * The rate of transformations compiled and tried (TRANSFORMATION_RATE_LIMIT_PER_SECOND): each
 * save with one and each try-it costs the gateway's workers a compile, so an account past its
 * rate gets a 429 at `transformation`, through its API and its portal sessions alike (each of
 * which has a bucket of its own as well), while another account, and its requests without a
 * transformation to compile, go on.
 */
let gw: TestGateway;
const { open, as } = browserSessions(() => gw);

// 1 a second, bursts of 2: a few requests exhaust it, and it does not refill mid-test.
const RATE = 1;
const SOURCE = "function handler(webhook) {\n  webhook.payload = { ok: true };\n  return webhook;\n}";
/** SOURCE, changed (an update resending the one saved costs nothing: see the last test). */
let edits = 0;
const edited = () => `${SOURCE}\n// edit ${++edits}`;

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
      gw.request("POST", `/v3/endpoints/${endpoint}`, { key, json: { transformation: edited() } });
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

  it("does not hold one account's rate against another", async () => {
    const noisy = await account("Noisy");
    const bystander = await account("Bystander");
    expectLimited(await untilRefused(() => trySaved(noisy.key, noisy.endpoint)));
    const theirs = await trySaved(bystander.key, bystander.endpoint);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    expect(theirs.body.request.body).toBe(JSON.stringify({ ok: true }));
  });

  it("counts a portal session's try-its and saves against its account's rate too: sessions share it", async () => {
    const { key, endpoint } = await account("Portals");
    const first = await portalOf(key);
    const second = await portalOf(key);
    const viaPortal = await trySaved(null, endpoint, as(first));
    expect(viaPortal.status, JSON.stringify(viaPortal.body)).toBe(200);
    expectLimited(await untilRefused(() => trySaved(null, endpoint, as(first))));
    // The account's burst is spent: a session it never used is limited, and so is its API.
    expectLimited(await trySaved(null, endpoint, as(second)));
    const save = await gw.request("POST", `/v3/endpoints/${endpoint}`, {
      json: { transformation: edited() },
      ...as(second),
    });
    expectLimited(save);
    expectLimited(await trySaved(key, endpoint));
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
        json: { transformation: edited() },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  });

  it("neither compiles nor counts the transformation saved, sent again on an update", async () => {
    const { key, endpoint } = await account("Resender");
    const update = (json: object) => gw.request("POST", `/v3/endpoints/${endpoint}`, { key, json });
    const saved = await update({ transformation: SOURCE });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const { counts } = gw.gateway.deps.transforms;
    const compiled = counts.compiles;
    // More than the burst: had any been counted, the last would be refused.
    for (let i = 0; i < RATE * 2 + 3; i++) {
      const res = await update({ transformation: SOURCE, description: `edit ${i}` });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.transformation).toBe(SOURCE);
    }
    expect(counts.compiles).toBe(compiled);
    // A changed one is compiled, and counted, as ever.
    expectLimited(await untilRefused(() => update({ transformation: edited() })));
    expect(counts.compiles).toBeGreaterThan(compiled);
  });
});
