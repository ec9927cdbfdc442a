import { EVENTS_PER_MESSAGE, RESULTS_PER_MESSAGE } from "@herald/contracts";
import type { Ceilings } from "./ceilings.ts";

/**
 * The design's bound on this machine: the rate a figure would reach if its HTTP exchanges and
 * broker messages were all it cost (no PostgreSQL, no Herald code), at this run's ceilings.
 * Each ceiling is measured with the whole machine to itself, so one unit of it costs
 * 1 / ceiling seconds of the machine, and the units of one delivery add up: no figure can pass
 * its bound, whatever the code does. An event travels to the dispatchers with others, up to
 * EVENTS_PER_MESSAGE a message; each delivery adds an attempt request to a sender (a message of
 * its own) and its result back, with others, up to RESULTS_PER_MESSAGE a message. At best,
 * under load, each shares its message with as many as it can carry.
 */
export type Unit = { http: number; messages: number };

export const COSTS = {
  /** The event's POST, and its share of a message to the dispatchers. */
  ingest: { http: 1, messages: 1 / EVENTS_PER_MESSAGE },
  /** Per delivery: the event's share of both, the webhook POST, an attempt request and a result's share. */
  endToEnd: (endpoints: number): Unit => ({
    http: 1 + 1 / endpoints,
    messages: 1 + 1 / RESULTS_PER_MESSAGE + 1 / (EVENTS_PER_MESSAGE * endpoints),
  }),
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
