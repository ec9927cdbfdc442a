import type { Broker } from "@herald/broker";
import { type AttemptCompletedV1, RESULTS_PER_MESSAGE } from "@herald/contracts";
import { type Context, context, trace, traceHeaders } from "@herald/runtime";

type Waiting = { result: AttemptCompletedV1; context: Context; done: (err?: Error) => void };

export type Reporter = {
  /** Resolves once the broker confirmed the message carrying this result; rejects if it was not. */
  report(result: AttemptCompletedV1): Promise<void>;
};

/**
 * Reports attempts' outcomes to the dispatcher several to a message (`attempts.completed.v1`):
 * one confirmed publish and one message for the dispatcher to take per report, not per
 * attempt. A report goes at once while fewer than `maxRunning` are being confirmed (after the
 * current tick, so outcomes of one tick go together); otherwise what finishes meanwhile waits
 * for one of them to be confirmed and then goes as one message, at most `perMessage`
 * (SENDER_RESULTS_PER_MESSAGE).
 * Idle, a lone result goes at once; under load, reports grow to what the broker confirms.
 *
 * Each caller's promise settles with its own message's confirm, so an attempt request is acked
 * only once its outcome is safe with the broker. Each result carries its attempt's trace
 * context (`traceparent`), where the dispatcher's record of it continues; the publish's span is
 * the first result's child, linked to the others'.
 */
export function resultReporter(broker: Broker, perMessage = RESULTS_PER_MESSAGE, maxRunning = 2): Reporter {
  // One a message, as senders before `attempts.completed.v1` did: what older dispatchers read.
  if (perMessage === 1) return { report: (result) => broker.publish("attempt.completed.v1", result) };
  const waiting: Waiting[] = [];
  let running = 0;
  let scheduled = false;

  function go(): void {
    scheduled = false;
    while (waiting.length && running < maxRunning) {
      const batch = waiting.splice(0, perMessage);
      running++;
      broker
        .publish(
          "attempts.completed.v1",
          { results: batch.map((w) => w.result) },
          {
            context: batch[0]!.context,
            links: batch.slice(1).flatMap((w) => {
              const linked = trace.getSpanContext(w.context);
              return linked ? [{ context: linked }] : [];
            }),
            attributes: { "messaging.batch.message_count": batch.length },
          },
        )
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
          // What finished while this one was confirmed goes now.
          if (waiting.length) go();
        });
    }
  }

  return {
    report(result) {
      const active = context.active();
      const { traceparent } = traceHeaders(active);
      return new Promise<void>((resolve, reject) => {
        waiting.push({
          result: traceparent ? { ...result, traceparent } : result,
          context: active,
          done: (err) => (err ? reject(err) : resolve()),
        });
        if (!scheduled && running < maxRunning) {
          scheduled = true;
          setImmediate(go);
        }
      });
    },
  };
}
