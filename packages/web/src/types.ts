/** The API's objects as the pages use them (see /v3/openapi.json for the whole contract). */
import {
  ATTEMPT_STATUSES,
  type AttemptStatus,
  DELIVERY_STATUSES,
  type DeliveryStatus,
  type ReplayStatus,
} from "@herald/db/statuses";

export type App = {
  id: string;
  object: "app";
  uid: string | null;
  name: string;
  created_at: string;
  updated_at: string;
};

export type Endpoint = {
  id: string;
  object: "endpoint";
  app: string;
  url: string;
  description: string;
  event_types: string[];
  disabled: boolean;
  disabled_reason: string | null;
  headers: Record<string, string>;
  /** A MongoDB-style query over `{ id, type, app, data }` the events must match; null: none. */
  filter: Record<string, unknown> | null;
  /** Deliveries a second at most; null: no limit. */
  rate_limit: number | null;
  /** Attempts in flight at once at most; null: the installation's default. */
  max_in_flight: number | null;
  /** fifo: one delivery at a time, in the order events were accepted. */
  ordering: "none" | "fifo";
  /** Mutual TLS, as saved: what the certificates are (the key is never shown). */
  tls: {
    client_certificate: CertificateShown | null;
    client_key: "[redacted]" | null;
    ca_certificate: CertificateShown | null;
  } | null;
  /** OAuth2 client credentials, as saved; the secret is never shown. */
  oauth2: {
    token_url: string;
    client_id: string;
    client_secret: "[redacted]";
    scope: string | null;
    audience: string | null;
    client_auth: "basic" | "post";
  } | null;
  delivery_state: DeliveryState;
  created_at: string;
  updated_at: string;
};

/**
 * How deliveries to an endpoint go now. Held deliveries (throttled or paused) are not failed
 * and use no retry step: they wait. `until`: when a pause or slow-down ends, if known.
 */
export type DeliveryState = {
  state: "active" | "throttled" | "paused" | "disabled";
  reason:
    | "disabled"
    | "not_responding"
    | "retry_after"
    | "slow_down"
    | "rate_limit"
    | "max_in_flight"
    | "ordering"
    | null;
  until: string | null;
  description: string;
  /** A fifo endpoint held by its order: the delivery the others wait behind (on the endpoint's own page). */
  held_behind: HeldBehind | null;
};

export type CertificateShown = {
  subject: string;
  issuer: string;
  not_after: string;
  fingerprint_sha256: string;
};

export type HeldBehind = {
  event: string;
  delivery: string;
  attempts: number;
  in_flight: boolean;
  next_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  awaiting_fan_out: boolean;
  waiting: number;
  waiting_capped: boolean;
};

export type JsonSchema = { [key: string]: unknown };

export type EventType = {
  object: "event_type";
  name: string;
  description: string;
  schema: JsonSchema | null;
  example: unknown;
  archived: boolean;
  created_at: string;
  updated_at: string;
};

// The statuses the whole system agrees on (packages/db/src/statuses.ts: no I/O, bundled as is).
export { ATTEMPT_STATUSES, type AttemptStatus, DELIVERY_STATUSES, type DeliveryStatus };

export type Delivery = {
  endpoint: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
};

export type HeraldEvent = {
  id: string;
  object: "event";
  app: string;
  type: string;
  data: unknown;
  /** When the payload was erased; `data` is then `{}`. */
  data_erased_at: string | null;
  created_at: string;
  deliveries: Delivery[];
  /** More deliveries than shown, listed by GET /v3/events/{id}/deliveries. */
  deliveries_has_more: boolean;
};

/** `body` is null once the event's payload was erased. */
export type AttemptRequest = { headers: Record<string, string> | null; body: string | null };

export type Attempt = {
  id: string;
  object: "attempt";
  event: string;
  endpoint: string;
  app: string;
  status: AttemptStatus;
  attempt_number: number;
  url: string;
  /** As sent; only when one attempt is retrieved. `headers` null if not recorded; null if its event is gone. */
  request?: AttemptRequest | null;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number | null;
  trace_id: string | null;
  scheduled_at: string;
  /** Handed to a sender; null while a pending attempt waits its turn. */
  sent_at: string | null;
  created_at: string;
  completed_at: string | null;
};

export type EndpointSecret = {
  object: "endpoint_secret";
  secret: string;
  /** While the previous secret still signs beside the new one (24 h after a rotation). */
  previous_secret_expires_at: string | null;
};

export type Replay = {
  id: string;
  object: "replay";
  endpoint: string;
  status: ReplayStatus;
  queued: number;
  attempted: number;
  succeeded: number;
  failed: number;
  since: string | null;
  event: string | null;
  created_at: string;
  completed_at: string | null;
};

export type EndpointStats = {
  object: "endpoint_stats";
  endpoint: string;
  window: "24h";
  succeeded: number;
  failed: number;
  success_rate: number | null;
  last_attempt_at: string | null;
  failing_since: string | null;
};

export type StatsBucket = {
  start: string;
  succeeded: number;
  failed: number;
  p50_ms: number | null;
  p95_ms: number | null;
};

export type AttemptStats = {
  object: "attempt_stats";
  window: "1h" | "24h";
  bucket: "minute" | "hour";
  data: StatsBucket[];
};

export type Session = {
  object: "session";
  kind: "portal" | "dashboard";
  app: string | null;
  read_only: boolean;
  expires_at: string;
};
