/**
 * Names the pages give to parts of the API's objects. The objects themselves are the SDK's
 * types, generated from the OpenAPI document the gateway serves: import them from
 * `@herald/sdk/types` (types only: no SDK code is bundled). A test (test/webApiTypes.test.ts)
 * fails if a page declares one of them again.
 */
import type { AttemptStats, Endpoint, EventType } from "@herald/sdk/types";

/** How deliveries to an endpoint go now (an endpoint's, and each endpoint health item's). */
export type DeliveryState = Endpoint["delivery_state"];

/** A fifo endpoint held by its order: the delivery the others wait behind. */
export type HeldBehind = NonNullable<DeliveryState["held_behind"]>;

/** One bar of the attempts chart: a minute's or an hour's attempts. */
export type StatsBucket = AttemptStats["data"][number];

/** An event type's JSON Schema. */
export type JsonSchema = NonNullable<EventType["schema"]>;
