import type { Ceilings } from "./ceilings.ts";

/**
 * The design's bound on this machine: the rate a figure would reach if its HTTP exchanges and
 * broker messages were all it cost (no PostgreSQL, no Herald code), at this run's ceilings.
 * Each ceiling is measured with the whole machine to itself, so one unit of it costs
 * 1 / ceiling seconds of the machine, and the units of one delivery add up: no figure can pass
 * its bound, whatever the code does. Today an event is one broker message (gateway →
 * dispatcher), and each delivery two more (the attempt request to a sender, its result back).
 */
export type Unit = { http: number; messages: number };

export const COSTS = {
  /** The event's POST, and its message to the dispatchers. */
  ingest: { http: 1, messages: 1 },
  /** Per delivery: the event's share of both, the webhook POST, an attempt request and a result. */
  endToEnd: (endpoints: number): Unit => ({ http: 1 + 1 / endpoints, messages: 2 + 1 / endpoints }),
};

export type Bound = { name: string; perSecond: number; ratioToHttp: number; unit: Unit };

export function boundOf(name: string, unit: Unit, c: Ceilings): Bound {
  const seconds = unit.http / c.httpPostsPerSecond + unit.messages / c.rabbitmqMessagesPerSecond;
  return { name, perSecond: 1 / seconds, ratioToHttp: 1 / seconds / c.httpPostsPerSecond, unit };
}

export function bounds(c: Ceilings): Bound[] {
  return [
    boundOf("ingest", COSTS.ingest, c),
    boundOf("end-to-end, 1 endpoint", COSTS.endToEnd(1), c),
    boundOf("end-to-end, 10 endpoints", COSTS.endToEnd(10), c),
  ];
}
