export { Broker, type BrokerOptions, BrokerUnavailableError, type PublishOptions } from "./broker.ts";
export { bindings, declareTopology, type QueueRole, type Topology, topologyNames } from "./topology.ts";
