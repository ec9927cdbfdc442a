import { type Broker, batchPublisher } from "@herald/broker";
import type { AttemptCompletedV1 } from "@herald/contracts";

export type Reporter = {
  /** Resolves once the broker confirmed the message carrying this result; rejects if it was not. */
  report(result: AttemptCompletedV1): Promise<void>;
};

/**
 * Reports attempts' outcomes to the dispatcher, `perMessage` at most to an
 * `attempts.completed.v1` (SENDER_RESULTS_PER_MESSAGE): what finishes while the last reports
 * are being confirmed goes together (the broker's batchPublisher), so a busy sender publishes
 * far fewer messages than it makes attempts. The caller acks its attempt request only once
 * the report is confirmed. With 1, each outcome goes alone as `attempt.completed.v1`, as
 * senders did before, which is what older dispatchers read.
 */
export function resultReporter(broker: Broker, perMessage: number): Reporter {
  if (perMessage === 1)
    return {
      report: (result) =>
        broker.publish("attempt.completed.v1", result, { messageId: `${result.attempt_id}.result` }),
    };
  const publisher = batchPublisher(
    broker,
    "attempts.completed.v1",
    "attempt.completed.v1",
    (results: AttemptCompletedV1[]) => ({ results }),
    perMessage,
  );
  return { report: (result) => publisher.add(result) };
}
