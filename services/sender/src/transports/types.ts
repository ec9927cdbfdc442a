import type { Target } from "@herald/contracts/destinations";

/**
 * The seam every destination type beyond HTTP is written against: one module per type in this
 * folder exports one `Transport`, and index.ts lists them. Adding a type (SQS, Kafka, Pub/Sub,
 * Service Bus) is one more module here and its URL grammar in @herald/contracts/destinations.
 */

/** What is published: the body of an HTTP delivery and its Standard Webhooks headers. */
export type Message = {
  /** `webhook-id`, `webhook-timestamp`, `webhook-signature`, `content-type`, and the endpoint's custom headers. */
  headers: Record<string, string>;
  /** The JSON body, byte for byte as an HTTP delivery sends it: the signature covers it. */
  body: string;
  /** The event's id (= `webhook-id`): object key, message id, for the receiver to deduplicate by. */
  eventId: string;
};

export type SendContext = {
  /** Aborted when the attempt's time is up: the send must stop and throw. */
  signal: AbortSignal;
  timeoutMs: number;
  /** The destination's credentials, from the URL's user info (sealed at rest); null without. */
  credentials: { username: string; password: string } | null;
  /**
   * Resolves the target's host as the SSRF guard allows it (destinations.ts): the address to
   * connect to, or throws a BlockedDestinationError. Every connection a transport opens goes to
   * an address it returned.
   */
  resolve(host: string): Promise<string>;
};

/**
 * What the destination acknowledged, in its own terms, recorded as the attempt's response body:
 * "exchange orders, routing key invoice.paid", "stream orders, entry 1700000000000-0",
 * "s3://bucket/prefix/evt_….json".
 */
export type Receipt = { detail: string };

/**
 * A failure the destination's server reported, named for the attempt's error kind: `rejected`
 * (a nack, an unroutable message, a refused object), `auth_error` (credentials refused).
 * Connection failures and timeouts are thrown as the client library's errors, mapped by
 * errorKind.ts, or as a TransportError with kind `connection_error` / `timeout`.
 */
export class TransportError extends Error {
  constructor(
    readonly kind: "rejected" | "auth_error" | "connection_error" | "timeout",
    message: string,
  ) {
    super(message);
  }
}

/**
 * A server's words with the credentials taken out: brokers name the user (and some echo what
 * they were sent) in their refusals, and these words become the attempt's error message.
 */
export function scrub(text: string, credentials: SendContext["credentials"]): string {
  let out = text;
  // The longer first: one may hold the other.
  const secrets = [credentials?.password ?? "", credentials?.username ?? ""].sort(
    (a, b) => b.length - a.length,
  );
  for (const secret of secrets) if (secret) out = out.split(secret).join("[redacted]");
  return out;
}

export interface Transport<T extends Target = Target> {
  readonly type: T["type"];
  /**
   * Publishes one message and resolves once the destination has acknowledged it (a publisher
   * confirm, a JetStream ack, an XADD id, a PUBACK, a 200 to the PUT); throws otherwise.
   * Connections are pooled per destination (host, port, credentials) with a bound; a destination
   * that hangs holds only its own attempts, each ended by `signal`.
   */
  send(target: T, message: Message, context: SendContext): Promise<Receipt>;
  /** Closes every pooled connection (the sender's shutdown). */
  close(): Promise<void>;
}
