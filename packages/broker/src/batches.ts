import type { MessageName, MessageTypes } from "@herald/contracts";
import {
  type Context,
  context,
  contextFrom,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  traceHeaders,
  tracer,
} from "@herald/runtime";
import type { Broker } from "./broker.ts";
import type { Received } from "./consumer.ts";

/**
 * Messages that carry several items (events, attempt results): one confirmed publish and one
 * message to take for many items, where one each cost most of a delivery's broker work. Each
 * item keeps a trace of its own, as if it had travelled alone: a PRODUCER span
 * `publish <item>` under the context it was added in, whose `traceparent` the item carries,
 * and on the consuming side a CONSUMER span `process <item>` under it, linked to the
 * message's span.
 */
export type Traced = { traceparent?: string };

type Waiting<T> = { item: T; span: Span; done: (err?: Error) => void };

export type BatchPublisher<T> = {
  /** Resolves once the broker confirmed the message carrying this item; rejects if it was not. */
  add(item: T): Promise<void>;
};

/**
 * Publishes items several to a message of `name`: an item goes at once while fewer than
 * `maxRunning` messages are being confirmed (after the current tick, so items of one tick go
 * together); otherwise what comes meanwhile waits for one of them to be confirmed, then goes
 * as one message of at most `perMessage`. Idle, a lone item goes at once; under load the
 * messages grow to what the broker confirms. Each caller's promise settles with its own
 * message's confirm, so whatever waits on it (an ack, an outbox row's delete) happens only
 * once its item is safe with the broker.
 */
export function batchPublisher<K extends MessageName, T extends Traced>(
  broker: Broker,
  name: K,
  item: MessageName,
  wrap: (items: T[]) => MessageTypes[K],
  perMessage: number,
  maxRunning = 2,
): BatchPublisher<T> {
  const waiting: Waiting<T>[] = [];
  let running = 0;
  let scheduled = false;

  function go(): void {
    scheduled = false;
    while (waiting.length && running < maxRunning) {
      const batch = waiting.splice(0, perMessage);
      running++;
      const [first, ...rest] = batch.map((w) => w.span.spanContext());
      broker
        .publish(name, wrap(batch.map((w) => w.item)), {
          context: trace.setSpanContext(context.active(), first!),
          links: rest.map((linked) => ({ context: linked })),
          attributes: { "messaging.batch.message_count": batch.length },
        })
        .then(
          () => {
            for (const w of batch) w.done();
          },
          (err: Error) => {
            for (const w of batch) w.done(err);
          },
        )
        .finally(() => {
          running--;
          // What came while this one was confirmed goes now.
          if (waiting.length) go();
        });
    }
  }

  return {
    add(value) {
      const span = tracer().startSpan(`publish ${item}`, {
        kind: SpanKind.PRODUCER,
        attributes: { "messaging.system": "rabbitmq", "messaging.operation.type": "send" },
      });
      const { traceparent } = traceHeaders(trace.setSpan(context.active(), span));
      return new Promise<void>((resolve, reject) => {
        waiting.push({
          item: traceparent ? { ...value, traceparent } : value,
          span,
          done: (err) => {
            if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
            span.end();
            if (err) reject(err);
            else resolve();
          },
        });
        if (!scheduled && running < maxRunning) {
          scheduled = true;
          setImmediate(go);
        }
      });
    },
  };
}

/** One item in hand, with the context its handling continues (its CONSUMER span's). */
export type Item<T> = { body: T; context: Context };

type Spanned<T> = Item<T> & { span: Span | null };

/**
 * The items of a batch of messages, each in a CONSUMER span `process <item>` of its own under
 * its `traceparent` (or the message's span when it carries none), linked to the message's span.
 * A message of the single form (`itemsOf` gives null) is an item as it is, in the message's own
 * span. Runs `work` on them all. Should it fail, not transiently, on a lone message of several
 * items (the consumer retries each message of a refused batch alone first: settle.ts), runs it
 * on each item alone, in order, so that one the database refuses does not hold back the others
 * that came with it, then throws that refusal for the consumer to retry the message and, in the
 * end, dead-letter it. `work` must be idempotent: those recorded are handled again on a retry.
 */
export async function handleItems<T extends Traced>(
  messages: Received<MessageName>[],
  item: MessageName,
  itemsOf: (message: Received<MessageName>) => T[] | null,
  work: (items: Item<T>[]) => Promise<void>,
  isTransient: (err: unknown) => boolean,
): Promise<void> {
  const items: Spanned<T>[] = [];
  for (const m of messages) {
    const many = itemsOf(m);
    if (!many) {
      items.push({ body: m.body as unknown as T, context: m.context, span: null });
      continue;
    }
    const message = trace.getSpanContext(m.context);
    for (const body of many) {
      const parent = body.traceparent ? contextFrom({ traceparent: body.traceparent }) : m.context;
      const span = tracer().startSpan(
        `process ${item}`,
        {
          kind: SpanKind.CONSUMER,
          links: message ? [{ context: message }] : [],
          attributes: { "messaging.system": "rabbitmq", "messaging.operation.type": "process" },
        },
        parent,
      );
      items.push({ body, context: trace.setSpan(parent, span), span });
    }
  }
  const failed = (i: Spanned<T>, err: unknown) =>
    i.span?.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
  try {
    await work(items);
  } catch (err) {
    if (messages.length > 1 || items.length < 2 || isTransient(err)) {
      for (const i of items) failed(i, err);
      throw err;
    }
    let refused: unknown = null;
    for (const one of items) {
      await work([one]).catch((e: unknown) => {
        failed(one, e);
        if (isTransient(e)) throw e;
        refused ??= e;
      });
    }
    if (refused) throw refused;
  } finally {
    for (const i of items) i.span?.end();
  }
}
