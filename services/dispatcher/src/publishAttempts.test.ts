import type { AttemptRequestedV1 } from "@herald/contracts";
import type { AttemptToSend } from "@herald/db/lifecycle";
import { describe, expect, it } from "vitest";
import type { DispatcherDeps } from "./deps.ts";
import { PublishFailed, publishAttempts } from "./publishAttempts.ts";

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
  attempt_number: 1,
  replay_id: null,
  url: "https://example.com",
  headers: {},
  headers_sealed: null,
  auth_sealed: null,
  secret: "sealed",
  previous_secret: null,
  previous_secret_expires_at: null,
  type: "t",
  data: "{}",
  created_at: new Date(),
  trace_context: null,
});

function deps(fails: Set<string>, published: string[], messages: AttemptRequestedV1[] = []): DispatcherDeps {
  return {
    broker: {
      topology: { queues: { senderAttempts: "live", senderBacklog: "backlog" } },
      publishToQueue: async (_q: string, _t: string, message: AttemptRequestedV1) => {
        messages.push(message);
        await new Promise((r) => setTimeout(r, fails.has(message.attempt_id) ? 1 : 5));
        if (fails.has(message.attempt_id)) throw new Error("channel closed");
        published.push(message.attempt_id);
      },
    },
    config: { attemptTimeoutMs: 15_000 },
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
});
