import type { Target } from "@herald/contracts/destinations";
import type { EgressAgents } from "../egress.ts";
import type { Transports } from "../publish.ts";
import { createAmqpTransport } from "./amqp.ts";
import { createMqttTransport } from "./mqtt.ts";
import { createNatsTransport } from "./nats.ts";
import { configurePools } from "./pool.ts";
import { createRedisTransport } from "./redis.ts";
import { createS3Transport } from "./s3.ts";
import type { Transport } from "./types.ts";

/**
 * Every destination type beyond HTTP, one module each behind types.ts's `Transport`. A type's
 * client is made at its first attempt, so a sender that publishes nowhere opens nothing. To add
 * a type: its URL grammar in @herald/contracts/destinations, its module here, a line below.
 */
const FACTORIES: Record<Target["type"], (agents: EgressAgents) => Transport> = {
  amqp: () => createAmqpTransport() as Transport,
  nats: () => createNatsTransport() as Transport,
  redis: () => createRedisTransport() as Transport,
  mqtt: () => createMqttTransport() as Transport,
  // S3 is HTTP underneath: out through the egress proxy (EGRESS_PROXY_URL) as webhooks go.
  s3: (agents) => createS3Transport({ agent: (timeoutMs) => agents.of(timeoutMs) }) as Transport,
};

/** `attemptTimeoutMs`: the longest a send holds a connection, so none is closed under one (pool.ts). */
export function transports(
  agents: EgressAgents,
  attemptTimeoutMs: number,
): Transports & { close(): Promise<void> } {
  configurePools({ busyMs: attemptTimeoutMs });
  const made = new Map<Target["type"], Transport>();
  return {
    of(type) {
      let transport = made.get(type);
      if (!transport) {
        transport = FACTORIES[type](agents);
        made.set(type, transport);
      }
      return transport;
    },
    async close() {
      await Promise.all([...made.values()].map((t) => t.close().catch(() => {})));
    },
  };
}
