import { Counter, Gauge, type Registry } from "@herald/runtime";
import type { Broker } from "./broker.ts";

/**
 * Consumer lag (messages waiting in each queue a service consumes, read at scrape time), and
 * the messages its consumers moved to `<prefix>.dead`.
 */
export function registerQueueGauges(registry: Registry, broker: Broker, queues: string[]): void {
  const dead = new Counter({
    name: "herald_messages_dead_lettered_total",
    help: "Messages moved to the dead-letter queue, by queue and reason (unparseable, handler_failed)",
    labelNames: ["queue", "reason"],
    registers: [registry],
  });
  broker.onDeadLettered((queue, reason) => dead.inc({ queue, reason }));
  const consumers = new Gauge({
    name: "herald_queue_consumers",
    help: "Consumers attached to the queue",
    labelNames: ["queue"],
    registers: [registry],
  });
  new Gauge({
    name: "herald_queue_messages_ready",
    help: "Messages waiting in the queue: the consumer lag",
    labelNames: ["queue"],
    registers: [registry],
    async collect() {
      for (const queue of queues) {
        const depth = await broker.queueDepth(queue);
        if (!depth) continue;
        this.set({ queue }, depth.messages);
        consumers.set({ queue }, depth.consumers);
      }
    },
  });
  new Gauge({
    name: "herald_broker_connected",
    help: "1 while the service is connected to RabbitMQ",
    registers: [registry],
    collect() {
      this.set(broker.connected ? 1 : 0);
    },
  });
}
