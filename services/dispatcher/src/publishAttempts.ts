import { Serialized } from "@herald/broker";
import {
  type AttemptRequestedV1,
  LARGE_MESSAGE_BYTES,
  REQUEST_BODY_MAX_BYTES,
  STORED_DATA_GROWTH,
  webhookPayload,
} from "@herald/contracts";
import { type AttemptToSend, eventData, laneOf } from "@herald/db/lifecycle";
import { type Context, context, contextFrom, trace, traceIdOf } from "@herald/runtime";
import type { Link } from "@opentelemetry/api";
import { inChunks } from "./chunks.ts";
import type { DispatcherDeps } from "./deps.ts";

/**
 * Hands attempts to the senders, one `attempt.requested.v1` each, built from the database
 * (senders have none), each to its lane's queue (`live`: first attempts of new events;
 * `backlog`: retries and replays; `large`: any whose message is over LARGE_MESSAGE_BYTES),
 * published with confirms, those of small messages first, each in the order given.
 *
 * Each attempt joins its event's trace (kept on the event row): under the given parent when
 * that is already in the event's trace (fan-out, a due retry), else directly under the
 * event's context with a link to the parent (a replay, the sweeper, the gate's poll).
 */
function traceOf(traceContext: string | null, parent: Context): { context: Context; links: Link[] } {
  if (!traceContext) return { context: parent, links: [] };
  const eventContext = contextFrom({ traceparent: traceContext });
  if (traceIdOf(parent) === traceIdOf(eventContext)) return { context: parent, links: [] };
  const parentSpan = trace.getSpanContext(parent);
  return { context: eventContext, links: parentSpan ? [{ context: parentSpan }] : [] };
}

/** Some attempts were not confirmed by the broker: these, and no others. */
export class PublishFailed extends Error {
  constructor(
    readonly attemptIds: string[],
    cause: unknown,
  ) {
    super(`${attemptIds.length} attempt(s) not published: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/**
 * What the attempts in hand may take of the dispatcher's heap at once, as messages built and
 * waiting for their confirms: the attempts go in chunks of about this many bytes, each
 * confirmed before the next is built: a small publish on the same connection waits behind one
 * large message at most. An event's payload is read and serialized once, however many of its
 * attempts go.
 */
export const PUBLISH_CHUNK_BYTES = 2 * 1024 * 1024;
/**
 * What every publish of large messages (over LARGE_MESSAGE_BYTES) at once may hold, in bytes:
 * fan-out, results, due retries (up to DISPATCHER_PREFETCH at once) and the gate's poll all
 * publish, and a hundred retries of the largest event come due together. Such a chunk waits for
 * its bytes (deps.publishBudget); chunks of small messages only (each a chunk of 2 MiB at most)
 * go at once.
 */
export const PUBLISH_BUDGET_BYTES = 16 * 1024 * 1024;
/** The fixed fields of one `attempt.requested.v1`, at most (ids, numbers, two sealed secrets). */
const MESSAGE_FIELDS = 2048;

/**
 * An attempt's message, in bytes, at most: its data's size as stored, quotes escaped, and the
 * endpoint's URL, sealed headers (up to 20 of 4 KiB), authentication and transformation
 * (escaped too: source code is full of quotes and line breaks).
 */
function messageBytes(r: AttemptToSend): number {
  const data = r.data?.length ?? (r.data_bytes ?? REQUEST_BODY_MAX_BYTES) * STORED_DATA_GROWTH;
  return (
    2 * data +
    r.url.length +
    (r.headers_sealed?.length ?? 0) +
    (r.auth_sealed?.length ?? 0) +
    2 * (r.transformation?.length ?? 0) +
    MESSAGE_FIELDS
  );
}

/**
 * Each event's payload as the JSON string `attempt.requested.v1` carries (quotes escaped), once
 * for all its attempts: kept in `made` from one chunk to the next while its attempts go on,
 * dropped after. Data not released with the attempts (over INLINE_DATA_BYTES) is read here. An
 * event gone meanwhile (its app purged) is absent.
 */
async function payloadsOf(
  deps: DispatcherDeps,
  rows: AttemptToSend[],
  made: Map<string, Buffer>,
): Promise<Map<string, Buffer>> {
  const events = new Set(rows.map((r) => r.event_id));
  for (const id of made.keys()) if (!events.has(id)) made.delete(id);
  const missing = [
    ...new Set(rows.filter((r) => r.data === null && !made.has(r.event_id)).map((r) => r.event_id)),
  ];
  const read = await eventData(deps.db, missing);
  for (const r of rows) {
    if (made.has(r.event_id)) continue;
    const data = r.data ?? read.get(r.event_id);
    if (data === undefined) continue;
    made.set(r.event_id, Buffer.from(JSON.stringify(webhookPayload(r.type, r.created_at, data))));
  }
  return made;
}

/**
 * `message` with its `payload`, serialized: the payload's bytes, already a JSON string, are
 * put in as they are rather than escaped again for each attempt.
 */
export function withPayload(message: Omit<AttemptRequestedV1, "payload">, payload: Buffer): Buffer {
  const head = JSON.stringify(message);
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},"payload":`), payload, Buffer.from("}")]);
}

function messageOf(deps: DispatcherDeps, r: AttemptToSend, now: Date): Omit<AttemptRequestedV1, "payload"> {
  const previous =
    r.previous_secret && r.previous_secret_expires_at && r.previous_secret_expires_at > now
      ? [r.previous_secret]
      : [];
  return {
    attempt_id: r.id,
    delivery_id: r.delivery_id,
    event_id: r.event_id,
    endpoint_id: r.endpoint_id,
    app_id: r.app_id,
    attempt_number: r.attempt_number,
    url: r.url,
    // Sealed, when they are: a token in them never crosses the broker in the clear.
    headers: r.headers_sealed ? {} : r.headers,
    sealed_headers: r.headers_sealed,
    ...(r.auth_sealed ? { sealed_auth: r.auth_sealed } : {}),
    // As stored, every attempt: the sender compiles it once and keeps it by its hash. Its
    // workers are shared by account, which only a transformed attempt needs to name.
    ...(r.transformation ? { transformation: r.transformation, account_id: r.account_id } : {}),
    secrets: [r.secret, ...previous],
    timeout_ms: deps.config.attemptTimeoutMs,
  };
}

/**
 * `parentOf(eventId)`: the context to publish an event's attempts under (default: the active
 * one), those of small messages first. Every publish is awaited, confirmed or not; should any fail, PublishFailed names
 * those alone (and every attempt of the chunks after it, not tried), so the caller puts back
 * only what the senders did not get (putting back one the broker confirmed would send it
 * twice). An attempt whose event is gone is not published: the sweeper ends it.
 */
export async function publishAttempts(
  deps: DispatcherDeps,
  rows: AttemptToSend[],
  parentOf: (eventId: string) => Context | undefined = () => undefined,
): Promise<void> {
  const now = new Date();
  const failed: string[] = [];
  let cause: unknown;
  const made = new Map<string, Buffer>();
  // Small messages first, each in its order: they never wait behind another's large ones.
  const small = rows.filter((r) => messageBytes(r) <= LARGE_MESSAGE_BYTES);
  const large = rows.filter((r) => messageBytes(r) > LARGE_MESSAGE_BYTES);
  for (const chunk of [
    ...inChunks(small, messageBytes, PUBLISH_CHUNK_BYTES),
    ...inChunks(large, messageBytes, PUBLISH_CHUNK_BYTES),
  ]) {
    if (cause !== undefined) {
      failed.push(...chunk.map((r) => r.id));
      continue;
    }
    // The chunk's messages, and (at most as large as one of them) the payload they are made of.
    // Small messages never wait behind large ones: they are what every other account sends.
    const sizes = chunk.map(messageBytes);
    const largest = Math.max(...sizes);
    const give =
      largest > LARGE_MESSAGE_BYTES
        ? await deps.publishBudget.take(sizes.reduce((a, b) => a + b, 0) + largest)
        : () => {};
    try {
      cause = await publishChunk(deps, chunk, made, now, parentOf, failed);
    } finally {
      give();
    }
  }
  if (cause !== undefined) throw new PublishFailed(failed, cause);
}

/** Publishes one chunk, confirmed; returns why one failed (their ids added to `failed`), if any did. */
async function publishChunk(
  deps: DispatcherDeps,
  chunk: AttemptToSend[],
  made: Map<string, Buffer>,
  now: Date,
  parentOf: (eventId: string) => Context | undefined,
  failed: string[],
): Promise<unknown> {
  const { queues } = deps.broker.topology;
  let payloads: Map<string, Buffer>;
  try {
    payloads = await payloadsOf(deps, chunk, made);
  } catch (err) {
    failed.push(...chunk.map((r) => r.id));
    return err;
  }
  const sent = chunk.filter((r) => payloads.has(r.event_id));
  const outcomes = await Promise.allSettled(
    sent.map((r) => {
      const content = withPayload(messageOf(deps, r, now), payloads.get(r.event_id)!);
      const lane = content.length > LARGE_MESSAGE_BYTES ? "large" : laneOf(r);
      deps.metrics.released.inc({ lane });
      return deps.broker.publishToQueue(
        lane === "large"
          ? queues.senderLarge
          : lane === "live"
            ? queues.senderAttempts
            : queues.senderBacklog,
        "attempt.requested.v1",
        new Serialized("attempt.requested.v1", content),
        {
          messageId: r.id,
          ...traceOf(r.trace_context, parentOf(r.event_id) ?? context.active()),
          attributes: {
            "herald.event_id": r.event_id,
            "herald.endpoint_id": r.endpoint_id,
            "herald.app_id": r.app_id,
            "herald.attempt_number": r.attempt_number,
          },
        },
      );
    }),
  );
  let cause: unknown;
  outcomes.forEach((o, i) => {
    if (o.status === "rejected") {
      failed.push(sent[i]!.id);
      cause ??= o.reason;
    }
  });
  return cause;
}
