import { type Broker, registerQueueGauges } from "@herald/broker";
import { Counter, Gauge, Histogram, type Registry } from "@herald/runtime";
import type { TransformPool } from "@herald/transform";

/**
 * What a sender counts: attempts by outcome and error kind, how long they took, and what its
 * transformation workers did.
 */
export type SenderMetrics = ReturnType<typeof senderMetrics>;

export function senderMetrics(registry: Registry, broker: Broker, transforms: Pick<TransformPool, "counts">) {
  registerQueueGauges(registry, broker, [
    broker.topology.queues.senderAttempts,
    broker.topology.queues.senderBacklog,
    broker.topology.queues.senderLarge,
  ]);
  new Gauge({
    name: "herald_transformation_work",
    help: "Endpoints' transformations since start, by kind: runs, compiles, failures, workers replaced after a run outlived its budget, and runs refused because their endpoint had too many waiting",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      for (const [kind, count] of Object.entries(transforms.counts)) this.set({ kind }, count);
    },
  });
  return {
    attempts: new Counter({
      name: "herald_attempts_total",
      help: "Attempts made, by outcome (succeeded, failed, cancelled) and error kind",
      labelNames: ["outcome", "error"],
      registers: [registry],
    }),
    duration: new Histogram({
      name: "herald_attempt_duration_seconds",
      help: "From sending the request to its response (or failure)",
      labelNames: ["outcome"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
      registers: [registry],
    }),
  };
}
