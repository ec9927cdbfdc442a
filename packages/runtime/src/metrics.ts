import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics, served at GET /metrics by every service. Each service registers its own
 * in one registry made here, next to the process metrics (CPU, memory, event loop lag).
 */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export { Counter, Gauge, Histogram, type Registry };
