export { type BatchPublisher, batchPublisher, handleItems, type Item, type Traced } from "./batches.ts";
export { Broker, type BrokerOptions, type PublishOptions, Serialized } from "./broker.ts";
export {
  type BatchSpec,
  Consumer,
  type DeadReason,
  type HandlersFor,
  type Received,
  type ReceivedOf,
} from "./consumer.ts";
export { BrokerUnavailableError, isTransientBrokerError } from "./errors.ts";
export { registerQueueGauges } from "./metrics.ts";
export {
  openRelayInbox,
  RelayClient,
  type RelayedRequest,
  type RelayRequest,
  type RelayResponse,
  RelayTimeoutError,
  RelayUnreachableError,
} from "./relay.ts";
export { type SettleIo, type SettlePolicy, settle } from "./settle.ts";
export {
  declareTopology,
  type MessagesOf,
  type QueueRole,
  queueMessages,
  type Topology,
  topologyNames,
} from "./topology.ts";
