import type { Broker } from "@herald/broker";
import { registerQueueGauges } from "@herald/broker";
import type { DeliveryStatus } from "@herald/contracts/statuses";
import { Counter, Histogram, type Registry } from "@herald/runtime";

/**
 * What the dispatcher counts: deliveries entering each status, retries, end-to-end delay, and
 * the release gate: attempts released by lane, endpoints holding attempts back and why, and
 * endpoints paused, resumed and slowed down.
 */
export type DispatcherMetrics = ReturnType<typeof dispatcherMetrics>;

export function dispatcherMetrics(registry: Registry, broker: Broker) {
  registerQueueGauges(registry, broker, [
    broker.topology.queues.dispatcherEvents,
    broker.topology.queues.dispatcherEventBatches,
    broker.topology.queues.dispatcherResults,
    broker.topology.queues.dispatcherResultBatches,
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
    expired: new Counter({
      name: "herald_events_expired_total",
      help: "Events removed one by one with their deliveries and attempts once older than their retention",
      registers: [registry],
    }),
    partitionsDropped: new Counter({
      name: "herald_log_partitions_dropped_total",
      help: "Ranges of the delivery log (events, deliveries, attempts) dropped whole once past the longest retention",
      registers: [registry],
    }),
    operationalEvents: new Counter({
      name: "herald_operational_events_total",
      help: "Operational events made (endpoint.disabled, delivery.exhausted, ...) for accounts' operational endpoints",
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
    released: new Counter({
      name: "herald_attempts_released_total",
      help: "Attempts handed to the senders by the release gate, by lane (live, backlog, large)",
      labelNames: ["lane"],
      registers: [registry],
    }),
    held: new Counter({
      name: "herald_release_held_total",
      help: "Times the release gate left an endpoint's attempts waiting, by what held them (paused, max_in_flight, rate_limit)",
      labelNames: ["reason"],
      registers: [registry],
    }),
    fifoOutOfOrder: new Counter({
      name: "herald_fifo_out_of_order_total",
      help: "Deliveries to fifo endpoints made after a later event was sent to the endpoint: their event's fan-out took longer than FIFO_FAN_OUT_WAIT",
      registers: [registry],
    }),
    flowChanges: new Counter({
      name: "herald_endpoint_flow_changes_total",
      help: "Endpoints paused (not_responding, retry_after), resumed, or slowed down (slow_down)",
      labelNames: ["change", "reason"],
      registers: [registry],
    }),
  };
}

export function countEnded(metrics: DispatcherMetrics, ended: Partial<Record<DeliveryStatus, number>>): void {
  for (const [status, count] of Object.entries(ended) as [DeliveryStatus, number][])
    metrics.deliveries.inc({ status }, count);
}
