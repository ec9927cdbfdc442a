export { Broker, type BrokerOptions, BrokerUnavailableError, type PublishOptions } from "./broker.ts";
export { type BatchSpec, Consumer, type Handlers, PermanentError, type Received } from "./consumer.ts";
export { registerQueueGauges } from "./metrics.ts";
export { bindings, declareTopology, type QueueRole, type Topology, topologyNames } from "./topology.ts";
