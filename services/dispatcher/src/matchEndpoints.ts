import type { FanOutEndpoint, FanOutEvent } from "@herald/db/lifecycle";

/**
 * Which endpoints receive which events: those of the event's app whose `event_types` list the
 * event's type, or every type when the list is empty. A test event goes to its one endpoint
 * only (`onlyTo`). Pure: the endpoints given are already neither deleted nor disabled.
 */
export function matchEndpoints(
  events: FanOutEvent[],
  endpoints: FanOutEndpoint[],
  onlyTo: ReadonlyMap<string, string> = new Map(),
): { event: FanOutEvent; endpoint: FanOutEndpoint }[] {
  return events.flatMap((event) =>
    endpoints
      .filter(
        (e) =>
          e.app_id === event.app_id &&
          (e.event_types.length === 0 || e.event_types.includes(event.type)) &&
          (!onlyTo.has(event.id) || onlyTo.get(event.id) === e.id),
      )
      .map((endpoint) => ({ event, endpoint })),
  );
}
