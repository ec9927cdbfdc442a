import type { AttemptRequestedV1, ErrorKind } from "@herald/contracts";
import { parseTarget, type Target } from "@herald/contracts/destinations";
import { deadline, inSpan, SpanKind, SpanStatusCode } from "@herald/runtime";
import { resolveGuarded } from "./destinations.ts";
import { errorKind } from "./errorKind.ts";
import { type Transport, TransportError } from "./transports/types.ts";

/**
 * An attempt to a destination beyond HTTP (a queue, stream, topic or bucket): the same body and
 * Standard Webhooks headers published there through its type's transport, the attempt ended by
 * the destination's acknowledgement. Its outcome has no status: the receipt (where it went) is
 * its response body.
 */
export type Transports = { of(type: Target["type"]): Transport };

export type PublishOptions = {
  transports: Transports;
  timeoutMs: number;
  allowPrivate: boolean;
};

type Published = { succeeded: boolean; error: ErrorKind | null; response_body: string | null };

/** Names the messaging system of each type, as OpenTelemetry's conventions spell it. */
const SYSTEM: Record<Target["type"], string> = {
  amqp: "rabbitmq",
  nats: "nats",
  redis: "redis",
  mqtt: "mqtt",
  s3: "aws_s3",
};

/** Where it goes, in the type's terms, for the span (no credentials: the URL has none here). */
function destinationName(target: Target): string {
  switch (target.type) {
    case "amqp":
      return target.exchange || target.routingKey;
    case "nats":
      return target.subject;
    case "redis":
      return target.stream;
    case "mqtt":
      return target.topic;
    case "s3":
      return target.bucket;
  }
}

export function publish(
  url: URL,
  request: AttemptRequestedV1,
  headers: Record<string, string>,
  credentials: { username: string; password: string } | null,
  options: PublishOptions,
  timeoutMs: number,
): Promise<Published> {
  let target: Target;
  try {
    target = parseTarget(url);
  } catch {
    return Promise.resolve({ succeeded: false, error: "invalid_url", response_body: null });
  }
  const attributes = {
    "messaging.system": SYSTEM[target.type],
    "messaging.operation.type": "send",
    "messaging.destination.name": destinationName(target),
    "server.address": "host" in target ? target.host : "",
    "herald.event_id": request.event_id,
    "herald.endpoint_id": request.endpoint_id,
    "herald.app_id": request.app_id,
    "herald.attempt_number": request.attempt_number,
  };
  return inSpan(`send ${destinationName(target)}`, { kind: SpanKind.PRODUCER, attributes }, async (span) => {
    const limit = deadline(timeoutMs);
    const signal = limit.signal;
    try {
      const receipt = await options.transports.of(target.type).send(
        target,
        { headers, body: request.payload, eventId: request.event_id },
        {
          signal,
          timeoutMs,
          credentials,
          resolve: (host) => resolveGuarded(host, options.allowPrivate),
        },
      );
      return { succeeded: true, error: null, response_body: bounded(receipt.detail) };
    } catch (err) {
      const kind: ErrorKind =
        err instanceof TransportError ? err.kind : signal.aborted ? "timeout" : errorKind(err);
      span.setAttribute("error.type", kind);
      span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
      // What the server said is the attempt's response body, as a token server's refusal is.
      const said = err instanceof TransportError ? bounded(err.message) : null;
      return { succeeded: false, error: kind, response_body: said };
    } finally {
      limit.clear();
    }
  });
}

/**
 * A receipt or a server's words, at most what an HTTP response body is kept to: a destination
 * chooses them (an XADD id, a JetStream stream name, an error reply), and may make them long.
 */
function bounded(text: string): string {
  return text.length > RECORDED_TEXT_CHARS ? `${text.slice(0, RECORDED_TEXT_CHARS)}…` : text;
}
const RECORDED_TEXT_CHARS = 4096;
