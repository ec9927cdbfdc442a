/**
 * The catalog of every message that crosses RabbitMQ: each one's type and its JSON schema,
 * declared side by side so that a field is added to both at once. No I/O here; index.ts
 * compiles the schemas and parses what consumers receive (`parseMessage`).
 */
import type { JSONSchemaType } from "ajv";
import type { ErrorKind } from "./errorKinds.ts";

/** Written by the gateway with the event, in one transaction; the dispatcher fans it out. */
export type EventCreatedV1 = {
  event_id: string;
  account_id: string;
  app_id: string;
  type: string;
  created_at: string;
  /** A test event, sent to this one endpoint only (absent: every subscribed endpoint). */
  only_endpoint?: string;
  /** W3C `traceparent` of its publish span, when it travels in `events.created.v1`. */
  traceparent?: string;
};

/**
 * Several accepted events in one message: a gateway publishes what it committed while its
 * previous publishes were being confirmed together. At most `EVENTS_PER_MESSAGE`.
 */
export type EventsCreatedV1 = {
  events: EventCreatedV1[];
};

/** The most events one `events.created.v1` carries. */
export const EVENTS_PER_MESSAGE = 100;

/** The endpoint was deleted: its pending and retrying deliveries are dropped. */
export type EndpointDeletedV1 = {
  endpoint_id: string;
  account_id: string;
  deleted_at: string;
};

/**
 * The event's payload was erased (`DELETE /v3/events/{id}/data`): the dispatcher drops its
 * pending and retrying deliveries, so nothing more is sent with it.
 */
export type EventErasedV1 = {
  event_id: string;
  account_id: string;
  erased_at: string;
};

/**
 * The app was deleted: it is gone from every read at once, and the dispatcher removes its
 * endpoints, events, deliveries and attempts in bounded batches.
 */
export type AppDeletedV1 = {
  app_id: string;
  account_id: string;
  deleted_at: string;
};

/**
 * Replay the endpoint's `failed` deliveries, oldest first: those whose last attempt was at or
 * after `since` (when given) and at or before `cutoff` (when the replay was requested), of
 * `event_id` only (when given).
 */
export type ReplayRequestedV1 = {
  replay_id: string;
  account_id: string;
  endpoint_id: string;
  since: string | null;
  event_id: string | null;
  cutoff: string;
  /**
   * The replay claimed its deliveries when it was asked for (deliveries.replay_id): it takes
   * those. Absent from replays asked for before claims, which take what matches.
   */
  claimed?: boolean;
};

/**
 * The dispatcher asks a sender to make one attempt. Everything the sender needs is here:
 * senders have no database. `secrets` are sealed (AES-GCM under ENCRYPTION_KEY), so the
 * broker never stores a signing secret in the clear; two during a rotation.
 */
export type AttemptRequestedV1 = {
  attempt_id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  app_id: string;
  attempt_number: number;
  url: string;
  /** Custom headers in the clear: only those of endpoints whose headers are not sealed yet. */
  headers: Record<string, string>;
  /** The endpoint's custom headers, a JSON map sealed under ENCRYPTION_KEY: the sender opens it. */
  sealed_headers?: string | null;
  /** The endpoint's authentication (EndpointAuth: mutual TLS, OAuth2), sealed; absent: none. */
  sealed_auth?: string | null;
  secrets: string[];
  /** The exact request body: `{"type":…,"timestamp":…,"data":…}`, made by `webhookPayload`. */
  payload: string;
  /**
   * How long the attempt may take: the dispatcher's ATTEMPT_TIMEOUT, so that its sweeper's
   * ATTEMPT_DEADLINE is known to be longer. A sender applies the shorter of this and its own.
   * Absent from dispatchers older than this field.
   */
  timeout_ms?: number;
  /**
   * The endpoint's transformation: JavaScript defining `handler(webhook)`, at most 64 KiB,
   * which the sender runs before signing (@herald/transform). Absent or null: none.
   */
  transformation?: string | null;
  /**
   * The event's account, sent with a transformation: the sender shares its transformation
   * workers between accounts first. Absent: the endpoint counts as an account of its own.
   */
  account_id?: string | null;
};

/** The most of a transformed request's body an attempt records (`request_body`); the rest is cut. */
export const RECORDED_BODY_MAX_BYTES = 64 * 1024;

/** A sender reports an attempt's outcome; the dispatcher records it and decides what follows. */
export type AttemptCompletedV1 = {
  attempt_id: string;
  delivery_id: string;
  endpoint_id: string;
  succeeded: boolean;
  response_status: number | null;
  /** The first 4 KiB of the response body. */
  response_body: string | null;
  /**
   * Why it failed: one of ERROR_KINDS (errorKinds.ts). The schema takes any string, so that a
   * kind a newer sender makes is recorded, not dead-lettered.
   */
  error: ErrorKind | null;
  duration_ms: number;
  /** From a Retry-After header on a 429 or 503. */
  retry_after_ms: number | null;
  trace_id: string | null;
  completed_at: string;
  /**
   * The request headers sent (Herald's and the endpoint's custom ones), as sent, but for the
   * values of credential-like headers, `[redacted]` (see `redactHeaders`). Absent when no
   * request was made (an invalid or blocked URL), and from senders older than this field.
   */
  request_headers?: Record<string, string> | null;
  /** The attempt's event: where its rows are (the log is partitioned by event). From senders since `attempts.completed.v1`. */
  event_id?: string;
  /** W3C `traceparent` of the sender's span for this attempt, which the result's record continues. */
  traceparent?: string;
  /**
   * The endpoint's transformation cancelled the delivery: no request was made, `succeeded` is
   * false and `error` null; the attempt and the delivery end `cancelled`.
   */
  cancelled?: boolean;
  /**
   * The request a transformation made in place of Herald's: its method, URL and body as sent
   * (the body's first RECORDED_BODY_MAX_BYTES). Absent when the request was Herald's own.
   */
  request_method?: string | null;
  request_url?: string | null;
  request_body?: string | null;
};

/**
 * Several attempts' outcomes in one message: a sender reports what finished while its
 * previous report was being confirmed together (services/sender/src/reports.ts), so a busy
 * sender publishes far fewer messages than it makes attempts. At most `RESULTS_PER_MESSAGE`.
 */
export type AttemptsCompletedV1 = {
  results: AttemptCompletedV1[];
};

/** The most results one `attempts.completed.v1` carries. */
export const RESULTS_PER_MESSAGE = 64;

/** A scheduled attempt came due: dead-lettered out of a delay queue when its TTL ran out. */
export type RetryDueV1 = {
  attempt_id: string;
  delivery_id: string;
};

export type MessageTypes = {
  "event.created.v1": EventCreatedV1;
  "events.created.v1": EventsCreatedV1;
  "endpoint.deleted.v1": EndpointDeletedV1;
  "event.erased.v1": EventErasedV1;
  "app.deleted.v1": AppDeletedV1;
  "replay.requested.v1": ReplayRequestedV1;
  "attempt.requested.v1": AttemptRequestedV1;
  "attempt.completed.v1": AttemptCompletedV1;
  "attempts.completed.v1": AttemptsCompletedV1;
  "retry.due.v1": RetryDueV1;
};

export type MessageName = keyof MessageTypes;

const isoTime = { type: "string", minLength: 1 } as const;
const nullableString = { type: "string", nullable: true } as never;
const nullableInt = { type: "integer", nullable: true } as never;

const traceparent = { type: "string", maxLength: 128 } as never;

const eventCreated: JSONSchemaType<EventCreatedV1> = {
  type: "object",
  required: ["event_id", "account_id", "app_id", "type", "created_at"],
  properties: {
    event_id: { type: "string" },
    account_id: { type: "string" },
    app_id: { type: "string" },
    type: { type: "string" },
    created_at: isoTime,
    only_endpoint: { type: "string", nullable: true },
    traceparent,
  },
};

const attemptResult: JSONSchemaType<AttemptCompletedV1> = {
  type: "object",
  required: [
    "attempt_id",
    "delivery_id",
    "endpoint_id",
    "succeeded",
    "response_status",
    "response_body",
    "error",
    "duration_ms",
    "retry_after_ms",
    "trace_id",
    "completed_at",
  ],
  properties: {
    attempt_id: { type: "string" },
    delivery_id: { type: "string" },
    endpoint_id: { type: "string" },
    succeeded: { type: "boolean" },
    response_status: nullableInt,
    response_body: nullableString,
    error: nullableString,
    duration_ms: { type: "integer", minimum: 0 },
    retry_after_ms: nullableInt,
    trace_id: nullableString,
    completed_at: isoTime,
    event_id: { type: "string", minLength: 1, maxLength: 64 } as never,
    traceparent,
    request_headers: {
      type: "object",
      nullable: true,
      required: [],
      additionalProperties: { type: "string" },
    } as never,
    cancelled: { type: "boolean", nullable: true } as never,
    request_method: { type: "string", nullable: true, maxLength: 16 } as never,
    request_url: { type: "string", nullable: true, maxLength: 4096 } as never,
    request_body: { type: "string", nullable: true, maxLength: RECORDED_BODY_MAX_BYTES } as never,
  },
};

/** The JSON schema of each message, by name: what `parseMessage` (index.ts) checks. */
export const messageSchemas: { [K in MessageName]: JSONSchemaType<MessageTypes[K]> } = {
  "event.created.v1": eventCreated,
  "events.created.v1": {
    type: "object",
    required: ["events"],
    properties: {
      events: { type: "array", items: eventCreated, minItems: 1, maxItems: EVENTS_PER_MESSAGE },
    },
  },
  "endpoint.deleted.v1": {
    type: "object",
    required: ["endpoint_id", "account_id", "deleted_at"],
    properties: { endpoint_id: { type: "string" }, account_id: { type: "string" }, deleted_at: isoTime },
  },
  "event.erased.v1": {
    type: "object",
    required: ["event_id", "account_id", "erased_at"],
    properties: { event_id: { type: "string" }, account_id: { type: "string" }, erased_at: isoTime },
  },
  "app.deleted.v1": {
    type: "object",
    required: ["app_id", "account_id", "deleted_at"],
    properties: { app_id: { type: "string" }, account_id: { type: "string" }, deleted_at: isoTime },
  },
  "replay.requested.v1": {
    type: "object",
    required: ["replay_id", "account_id", "endpoint_id", "since", "event_id", "cutoff"],
    properties: {
      replay_id: { type: "string" },
      account_id: { type: "string" },
      endpoint_id: { type: "string" },
      since: nullableString,
      event_id: nullableString,
      cutoff: isoTime,
      claimed: { type: "boolean", nullable: true },
    },
  },
  "attempt.requested.v1": {
    type: "object",
    required: [
      "attempt_id",
      "delivery_id",
      "event_id",
      "endpoint_id",
      "app_id",
      "attempt_number",
      "url",
      "headers",
      "secrets",
      "payload",
    ],
    properties: {
      attempt_id: { type: "string" },
      delivery_id: { type: "string" },
      event_id: { type: "string" },
      endpoint_id: { type: "string" },
      app_id: { type: "string" },
      attempt_number: { type: "integer", minimum: 1 },
      url: { type: "string" },
      headers: { type: "object", required: [], additionalProperties: { type: "string" } },
      sealed_headers: { type: "string", nullable: true },
      sealed_auth: { type: "string", nullable: true } as never,
      secrets: { type: "array", items: { type: "string" }, minItems: 1 },
      payload: { type: "string" },
      timeout_ms: { type: "integer", minimum: 1, nullable: true } as never,
      transformation: { type: "string", nullable: true, maxLength: 65536 } as never,
      account_id: { type: "string", nullable: true } as never,
    },
  },
  "attempt.completed.v1": attemptResult,
  "attempts.completed.v1": {
    type: "object",
    required: ["results"],
    properties: {
      results: { type: "array", items: attemptResult, minItems: 1, maxItems: RESULTS_PER_MESSAGE },
    },
  },
  "retry.due.v1": {
    type: "object",
    required: ["attempt_id", "delivery_id"],
    properties: { attempt_id: { type: "string" }, delivery_id: { type: "string" } },
  },
};
