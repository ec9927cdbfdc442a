import type { Broker } from "@herald/broker";
import { registerQueueGauges } from "@herald/broker";
import { Counter, Histogram, type Registry } from "@herald/runtime";

/** What the dispatcher counts: deliveries entering each status, retries, and end-to-end delay. */
export type DispatcherMetrics = ReturnType<typeof dispatcherMetrics>;

export function dispatcherMetrics(registry: Registry, broker: Broker) {
  registerQueueGauges(registry, broker, [
    broker.topology.queues.dispatcherEvents,
    broker.topology.queues.dispatcherResults,
    broker.topology.queues.dispatcherRetries,
    broker.topology.queues.dispatcherControl,
  ]);
  return {
    deliveries: new Counter({
      name: "herald_deliveries_total",
      help: "Deliveries entering each status",
      labelNames: ["status"],
      registers: [registry],
    }),
    retriesScheduled: new Counter({
      name: "herald_retries_scheduled_total",
      help: "Retries scheduled after a failed attempt",
      registers: [registry],
    }),
    deliveryDelay: new Histogram({
      name: "herald_delivery_delay_seconds",
      help: "From the event's acceptance (201) to its delivery's first success",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36_000],
      registers: [registry],
    }),
  };
}
