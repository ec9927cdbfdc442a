import type { Serialized } from "@herald/broker";
import { type AttemptRequestedV1, LARGE_MESSAGE_BYTES } from "@herald/contracts";
import type { AttemptToSend } from "@herald/db/lifecycle";
import { describe, expect, it } from "vitest";
import { ByteBudget } from "./byteBudget.ts";
import type { DispatcherDeps } from "./deps.ts";
import {
  PUBLISH_BUDGET_BYTES,
  PUBLISH_CHUNK_BYTES,
  PublishFailed,
  publishAttempts,
} from "./publishAttempts.ts";

/**
 * What a partly failed publish reports: the attempts the broker did not confirm and no others,
 * so only those are put back to wait (one put back after its confirm would be sent twice).
 * The broker's publish is a stand-in here; the real one is tested in test/broker.test.ts.
 */
const row = (id: string): AttemptToSend => ({
  id,
  delivery_id: `d_${id}`,
  event_id: `e_${id}`,
  endpoint_id: "ep",
  app_id: "app",
  account_id: "acct",
  attempt_number: 1,
  replay_id: null,
  url: "https://example.com",
  headers: {},
  headers_sealed: null,
  auth_sealed: null,
  transformation: null,
  secret: "sealed",
  previous_secret: null,
  previous_secret_expires_at: null,
  type: "t",
  data: "{}",
  data_bytes: 2,
  created_at: new Date(),
  trace_context: null,
});

function deps(
  fails: Set<string>,
  published: string[],
  messages: AttemptRequestedV1[] = [],
  queues: string[] = [],
  db: unknown = null,
): DispatcherDeps {
  return {
    db,
    broker: {
      topology: { queues: { senderAttempts: "live", senderBacklog: "backlog", senderLarge: "large" } },
      publishToQueue: async (q: string, _t: string, body: Serialized<"attempt.requested.v1">) => {
        queues.push(q);
        const message = JSON.parse(body.content.toString()) as AttemptRequestedV1;
        messages.push(message);
        await new Promise((r) => setTimeout(r, fails.has(message.attempt_id) ? 1 : 5));
        if (fails.has(message.attempt_id)) throw new Error("channel closed");
        published.push(message.attempt_id);
      },
    },
    config: { attemptTimeoutMs: 15_000 },
    publishBudget: new ByteBudget(PUBLISH_BUDGET_BYTES),
    metrics: { released: { inc: () => {} } },
  } as unknown as DispatcherDeps;
}

describe("publishAttempts", () => {
  it("waits for every publish and names only the attempts that failed", async () => {
    const published: string[] = [];
    const err = await publishAttempts(
      deps(new Set(["b", "d"]), published),
      ["a", "b", "c", "d"].map(row),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishFailed);
    expect((err as PublishFailed).attemptIds).toEqual(["b", "d"]);
    expect((err as PublishFailed).message).toMatch(/2 attempt\(s\) not published: channel closed/);
    // The others were confirmed, and confirmed before it answered (the failures came first).
    expect(published.sort()).toEqual(["a", "c"]);
  });

  it("resolves when every publish is confirmed", async () => {
    const published: string[] = [];
    await publishAttempts(deps(new Set(), published), ["a", "b"].map(row));
    expect(published.sort()).toEqual(["a", "b"]);
  });

  it("passes an endpoint's custom headers sealed, as stored, never opened", async () => {
    const messages: AttemptRequestedV1[] = [];
    const sealed = { ...row("s"), headers: { "X-Api-Key": "" }, headers_sealed: "v2.sealed-map" };
    const legacy = { ...row("l"), headers: { "X-Tenant": "acme" }, headers_sealed: null };
    await publishAttempts(deps(new Set(), [], messages), [sealed, legacy]);
    const sent = Object.fromEntries(messages.map((m) => [m.attempt_id, m]));
    expect(sent.s).toMatchObject({ headers: {}, sealed_headers: "v2.sealed-map" });
    expect(sent.l).toMatchObject({ headers: { "X-Tenant": "acme" }, sealed_headers: null });
  });

  it("passes an endpoint's transformation as stored, and none for an endpoint without one", async () => {
    const messages: AttemptRequestedV1[] = [];
    const source = 'function handler(w) {\n  w.headers["x-a"] = "b";\n  return w;\n}';
    await publishAttempts(deps(new Set(), [], messages), [{ ...row("t"), transformation: source }, row("n")]);
    const sent = Object.fromEntries(messages.map((m) => [m.attempt_id, m]));
    expect(sent.t!.transformation).toBe(source);
    expect(sent.n).not.toHaveProperty("transformation");
  });

  it("reads large data once an event, sends it in chunks, and its messages to the large lane", async () => {
    const data = JSON.stringify({ text: 'a "quoted" line '.repeat(40_000) });
    const reads: string[][] = [];
    const db = {
      query: async (q: { values: [string[]] }) => {
        reads.push(q.values[0]);
        return { rows: q.values[0].map((id) => ({ id, data })) };
      },
    };
    const messages: AttemptRequestedV1[] = [];
    const queues: string[] = [];
    // 20 endpoints of one event of 640 KB, not released with the data; one small event beside.
    const large = Array.from({ length: 20 }, (_, i) => ({
      ...row(`l${i}`),
      event_id: "e_large",
      data: null,
      data_bytes: data.length,
    }));
    await publishAttempts(deps(new Set(), [], messages, queues, db), [...large, row("small")]);
    // Read once, though its 20 attempts went in several chunks of PUBLISH_CHUNK_BYTES.
    expect(reads).toEqual([["e_large"]]);
    expect(messages).toHaveLength(21);
    // The small one first, then the large ones.
    expect(messages[0]!.attempt_id).toBe("small");
    for (const m of messages.slice(1)) {
      expect(m.payload.length).toBeGreaterThan(LARGE_MESSAGE_BYTES);
      expect(JSON.parse(m.payload).data).toEqual(JSON.parse(data));
    }
    expect(queues).toEqual(["live", ...Array(20).fill("large")]);
    expect(20 * 2 * data.length).toBeGreaterThan(PUBLISH_CHUNK_BYTES);
  });

  it("names every attempt of the chunks after a failed one, none of which it tried", async () => {
    const data = "x".repeat(1_000_000);
    const rows = ["a", "b", "c", "d", "e", "f", "g", "h"].map((id) => ({
      ...row(id),
      data: JSON.stringify(data),
      data_bytes: data.length + 2,
    }));
    const published: string[] = [];
    const err = await publishAttempts(deps(new Set(["b"]), published), rows).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishFailed);
    const failed = (err as PublishFailed).attemptIds;
    expect(failed).toContain("b");
    // Each is in exactly one list: confirmed, or put back.
    expect([...failed, ...published].sort()).toEqual(rows.map((r) => r.id));
    expect(published.length).toBeGreaterThan(0);
    expect(failed.length).toBeGreaterThan(1);
  });

  it("holds at most PUBLISH_BUDGET_BYTES of messages unconfirmed, however many publish at once", async () => {
    const data = JSON.stringify({ text: "x".repeat(1_000_000) });
    let inFlight = 0;
    let most = 0;
    const d = deps(new Set(), []);
    (d.broker as unknown as { publishToQueue: unknown }).publishToQueue = async (
      _q: string,
      _t: string,
      body: Serialized<"attempt.requested.v1">,
    ) => {
      inFlight += body.content.length;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight -= body.content.length;
    };
    // Forty due retries of the largest event, each its own release, all at once.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        publishAttempts(d, [{ ...row(`r${i}`), event_id: "e", data, data_bytes: data.length }]),
      ),
    );
    expect(40 * data.length).toBeGreaterThan(2 * PUBLISH_BUDGET_BYTES);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(PUBLISH_BUDGET_BYTES);
    expect(d.publishBudget.held()).toBe(0);
  });

  it("publishes small messages before large ones given before them", async () => {
    const data = JSON.stringify({ text: "x".repeat(500_000) });
    const messages: AttemptRequestedV1[] = [];
    const large = ["l1", "l2", "l3"].map((id) => ({ ...row(id), data, data_bytes: data.length }));
    await publishAttempts(deps(new Set(), [], messages), [...large, row("s1"), row("s2")]);
    expect(messages.map((m) => m.attempt_id)).toEqual(["s1", "s2", "l1", "l2", "l3"]);
  });
});
