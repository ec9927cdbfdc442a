/**
 * The catalog of every message that crosses RabbitMQ. No I/O here.
 *
 * Terms used across Herald:
 * - event: something that happened in a product backend (`invoice.paid`), sent once to Herald.
 * - endpoint: a URL one customer (an app) registered to receive events, with a signing secret.
 * - delivery: one event on its way to one endpoint; it has a status and a count of attempts.
 * - attempt: one HTTP request for a delivery; a delivery has attempts until one succeeds or
 *   the retry schedule runs out.
 *
 * Each message has a versioned name (`event.created.v1`), which is also its routing key, a
 * JSON schema, and a type derived from the same declaration. A consumer parses what it
 * receives with `parseMessage`; a message that does not parse is dead-lettered, never requeued.
 */
import { Ajv, type JSONSchemaType, type ValidateFunction } from "ajv";

/** Written by the gateway with the event, in one transaction; the dispatcher fans it out. */
export type EventCreatedV1 = {
  event_id: string;
  account_id: string;
  app_id: string;
  type: string;
  created_at: string;
};

/** The endpoint was deleted: its pending and retrying deliveries are dropped. */
export type EndpointDeletedV1 = {
  endpoint_id: string;
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
};

export type MessageTypes = {
  "event.created.v1": EventCreatedV1;
  "endpoint.deleted.v1": EndpointDeletedV1;
  "replay.requested.v1": ReplayRequestedV1;
};

export type MessageName = keyof MessageTypes;

const isoTime = { type: "string", minLength: 1 } as const;

const schemas: { [K in MessageName]: JSONSchemaType<MessageTypes[K]> } = {
  "event.created.v1": {
    type: "object",
    required: ["event_id", "account_id", "app_id", "type", "created_at"],
    properties: {
      event_id: { type: "string" },
      account_id: { type: "string" },
      app_id: { type: "string" },
      type: { type: "string" },
      created_at: isoTime,
    },
  },
  "endpoint.deleted.v1": {
    type: "object",
    required: ["endpoint_id", "account_id", "deleted_at"],
    properties: { endpoint_id: { type: "string" }, account_id: { type: "string" }, deleted_at: isoTime },
  },
  "replay.requested.v1": {
    type: "object",
    required: ["replay_id", "account_id", "endpoint_id", "since", "event_id", "cutoff"],
    properties: {
      replay_id: { type: "string" },
      account_id: { type: "string" },
      endpoint_id: { type: "string" },
      since: { type: "string", nullable: true } as never,
      event_id: { type: "string", nullable: true } as never,
      cutoff: isoTime,
    },
  },
};

export const messageNames = Object.keys(schemas) as MessageName[];

const ajv = new Ajv({ allErrors: false });
const validators = Object.fromEntries(messageNames.map((name) => [name, ajv.compile(schemas[name])])) as {
  [K in MessageName]: ValidateFunction<MessageTypes[K]>;
};

export function isMessageName(value: string): value is MessageName {
  return Object.hasOwn(schemas, value);
}

export type ParseResult<K extends MessageName> =
  | { ok: true; value: MessageTypes[K] }
  | { ok: false; error: string };

/** Parses a message body received under `name`. */
export function parseMessage<K extends MessageName>(name: K, body: Buffer | string): ParseResult<K> {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === "string" ? body : body.toString("utf8"));
  } catch {
    return { ok: false, error: "body is not JSON" };
  }
  const validate = validators[name];
  if (!validate(value)) return { ok: false, error: ajv.errorsText(validate.errors) };
  return { ok: true, value };
}

export function messageSchema(name: MessageName): object {
  return schemas[name];
}
