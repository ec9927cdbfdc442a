import { describe, expect, it } from "vitest";
import {
  type AttemptCompletedV1,
  isMessageName,
  isSensitiveHeader,
  type MessageName,
  type MessageTypes,
  messageNames,
  parseMessage,
  REDACTED,
  RESULTS_PER_MESSAGE,
  redactHeaders,
  webhookPayload,
} from "./index.ts";

const completed: AttemptCompletedV1 = {
  attempt_id: "atmpt_1",
  delivery_id: "dlv_1",
  endpoint_id: "ep_1",
  succeeded: true,
  response_status: 200,
  response_body: "ok",
  error: null,
  duration_ms: 12,
  retry_after_ms: null,
  trace_id: null,
  completed_at: "2026-11-23T10:00:00Z",
};

/** One valid example of every message in the catalog. */
const examples: { [K in MessageName]: MessageTypes[K] } = {
  "event.created.v1": {
    event_id: "evt_1",
    account_id: "acct_1",
    app_id: "app_1",
    type: "invoice.paid",
    created_at: "2026-11-23T10:00:00.000Z",
  },
  "events.created.v1": {
    events: [
      {
        event_id: "evt_1",
        account_id: "acct_1",
        app_id: "app_1",
        type: "invoice.paid",
        created_at: "2026-11-23T10:00:00.000Z",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      },
    ],
  },
  "endpoint.deleted.v1": { endpoint_id: "ep_1", account_id: "acct_1", deleted_at: "2026-11-23T10:00:00Z" },
  "event.erased.v1": { event_id: "evt_1", account_id: "acct_1", erased_at: "2026-11-23T10:00:00Z" },
  "app.deleted.v1": { app_id: "app_1", account_id: "acct_1", deleted_at: "2026-11-23T10:00:00Z" },
  "replay.requested.v1": {
    replay_id: "rpl_1",
    account_id: "acct_1",
    endpoint_id: "ep_1",
    since: null,
    event_id: null,
    cutoff: "2026-11-23T10:00:00Z",
  },
  "attempt.requested.v1": {
    attempt_id: "atmpt_1",
    delivery_id: "dlv_1",
    event_id: "evt_1",
    endpoint_id: "ep_1",
    app_id: "app_1",
    attempt_number: 1,
    url: "https://example.com/hook",
    headers: { "x-tenant": "acme" },
    secrets: ["v1.a.b.c"],
    payload: "{}",
    timeout_ms: 15_000,
  },
  "attempt.completed.v1": completed,
  "attempts.completed.v1": {
    results: [
      {
        ...completed,
        event_id: "evt_1",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      },
      { ...completed, attempt_id: "atmpt_2", succeeded: false, response_status: 500, error: "http_error" },
    ],
  },
  "retry.due.v1": { attempt_id: "atmpt_1", delivery_id: "dlv_1" },
};

describe("the message catalog", () => {
  it("has a schema for every message name, and knows no other", () => {
    expect(messageNames.sort()).toEqual(Object.keys(examples).sort());
    expect(isMessageName("event.created.v1")).toBe(true);
    expect(isMessageName("event.created.v2")).toBe(false);
    expect(isMessageName("toString")).toBe(false);
  });

  it.each(messageNames)("parses a valid %s, from a Buffer as from a string", (name) => {
    const text = JSON.stringify(examples[name]);
    expect(parseMessage(name, Buffer.from(text))).toEqual({ ok: true, value: examples[name] });
    expect(parseMessage(name, text)).toEqual({ ok: true, value: examples[name] });
  });

  it.each(messageNames)("refuses a %s missing a required field, naming it", (name) => {
    const [first] = Object.keys(examples[name]);
    const { [first!]: _, ...rest } = examples[name] as Record<string, unknown>;
    const parsed = parseMessage(name, JSON.stringify(rest));
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(first);
  });

  it("refuses what is not JSON, and values of the wrong type", () => {
    expect(parseMessage("retry.due.v1", "{not json")).toEqual({ ok: false, error: "body is not JSON" });
    expect(parseMessage("retry.due.v1", "null").ok).toBe(false);
    const wrong = { ...examples["attempt.completed.v1"], succeeded: "yes" };
    expect(parseMessage("attempt.completed.v1", JSON.stringify(wrong)).ok).toBe(false);
    const negative = { ...examples["attempt.completed.v1"], duration_ms: -1 };
    expect(parseMessage("attempt.completed.v1", JSON.stringify(negative)).ok).toBe(false);
    for (const results of [
      [],
      Array(RESULTS_PER_MESSAGE + 1).fill(completed),
      [{ ...completed, succeeded: "yes" }],
    ])
      expect(parseMessage("attempts.completed.v1", JSON.stringify({ results })).ok).toBe(false);
    expect(
      parseMessage(
        "attempts.completed.v1",
        JSON.stringify({ results: Array(RESULTS_PER_MESSAGE).fill(completed) }),
      ).ok,
    ).toBe(true);
    const noSecrets = { ...examples["attempt.requested.v1"], secrets: [] };
    expect(parseMessage("attempt.requested.v1", JSON.stringify(noSecrets)).ok).toBe(false);
  });

  it("accepts messages from an older producer, without the fields added since", () => {
    const { timeout_ms: _, ...older } = examples["attempt.requested.v1"];
    expect(parseMessage("attempt.requested.v1", JSON.stringify(older)).ok).toBe(true);
    const { request_headers: __, ...result } = {
      ...examples["attempt.completed.v1"],
      request_headers: null,
    };
    expect(parseMessage("attempt.completed.v1", JSON.stringify(result)).ok).toBe(true);
  });
});

describe("the webhook body", () => {
  it("is the type, the acceptance time and the stored data, byte for byte", () => {
    const body = webhookPayload("invoice.paid", new Date("2026-11-23T10:00:00.000Z"), '{"b":1, "a":2}');
    expect(body).toBe('{"type":"invoice.paid","timestamp":"2026-11-23T10:00:00.000Z","data":{"b":1, "a":2}}');
    expect(JSON.parse(body).data).toEqual({ a: 2, b: 1 });
  });
});

describe("recorded request headers", () => {
  it("hide credential-like values and keep the rest as sent", () => {
    expect(
      redactHeaders({
        Authorization: "Bearer x",
        "X-Api-Key": "k",
        "webhook-signature": "v1,abc",
        "x-tenant": "acme",
      }),
    ).toEqual({
      Authorization: REDACTED,
      "X-Api-Key": REDACTED,
      "webhook-signature": "v1,abc",
      "x-tenant": "acme",
    });
    expect(isSensitiveHeader("Cookie")).toBe(true);
    expect(isSensitiveHeader("X-Session-Id")).toBe(true);
    expect(isSensitiveHeader("content-type")).toBe(false);
  });
});
