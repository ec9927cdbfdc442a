/**
 * What crosses RabbitMQ, and the limits and shapes the services share. No I/O here.
 *
 * Terms used across Herald:
 * - event: something that happened in a product backend (`invoice.paid`), sent once to Herald.
 * - endpoint: a URL one customer (an app) registered to receive events, with a signing secret.
 * - delivery: one event on its way to one endpoint; it has a status and a count of attempts.
 * - attempt: one HTTP request for a delivery; a delivery has attempts until one succeeds or
 *   the retry schedule runs out.
 *
 * Each message has a versioned name (`event.created.v1`), which is also its routing key, a
 * JSON schema, and a type derived from the same declaration (messages.ts). A consumer parses
 * what it receives with `parseMessage`; a message that does not parse is dead-lettered, never
 * requeued.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { type MessageName, type MessageTypes, messageSchemas as schemas } from "./messages.ts";

export type { EndpointAuth } from "./endpointAuth.ts";
export {
  countsAgainstEndpoint,
  ERROR_KINDS,
  type ErrorKind,
  isErrorKind,
  isUnreachable,
  madeNoRequest,
} from "./errorKinds.ts";
export { isSensitiveHeader, REDACTED, redactHeaders } from "./headers.ts";
export {
  type AppDeletedV1,
  type AttemptCompletedV1,
  type AttemptRequestedV1,
  type AttemptsCompletedV1,
  type EndpointDeletedV1,
  EVENTS_PER_MESSAGE,
  type EventCreatedV1,
  type EventErasedV1,
  type EventsCreatedV1,
  type MessageName,
  type MessageTypes,
  RECORDED_BODY_MAX_BYTES,
  RESULTS_PER_MESSAGE,
  type ReplayRequestedV1,
  type RetryDueV1,
} from "./messages.ts";
export {
  ATTEMPT_STATUSES,
  type AttemptStatus,
  DELIVERY_STATUSES,
  type DeliveryStatus,
  isOpen,
  REPLAY_STATUSES,
  type ReplayStatus,
} from "./statuses.ts";

/**
 * The largest request body the gateway accepts, and so the largest event `data` as sent to it,
 * in bytes. Every memory budget downstream starts from it (docs/operations.md, "Limits").
 */
export const REQUEST_BODY_MAX_BYTES = 1024 * 1024;

/**
 * The most an event's data grows from its accepted text to the text sent: PostgreSQL writes
 * JSON back with a space after each `:` and `,` (`[1,1]` → `[1, 1]`: half as much again at most).
 */
export const STORED_DATA_GROWTH = 1.5;

/**
 * An `attempt.requested.v1` over this many bytes (a large payload, or many long custom headers)
 * goes to the senders' `large` lane, whose few slots bound what large messages a sender holds at
 * once; the other lanes' many slots then hold small ones only.
 */
export const LARGE_MESSAGE_BYTES = 32 * 1024;

/**
 * The body of every attempt of an event, byte for byte: the dispatcher builds it to send, the
 * gateway to show an attempt's request. `data` is the event's stored JSON text as it is (no
 * parse and re-serialize), `timestamp` the event's acceptance time.
 */
export function webhookPayload(type: string, createdAt: Date, data: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(createdAt.toISOString())},"data":${data}}`;
}

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
