import type { FanOutEndpoint, FanOutEvent } from "@herald/db/lifecycle";

/**
 * Which endpoints receive which events: those of the event's app whose `event_types` list the
 * event's type, or every type when the list is empty. A test event goes to its one endpoint
 * only (`onlyTo`), whatever that one lists: the gateway chose its type (for an operational
 * endpoint, whose list holds Herald's types only, one of the account's ordinary types). Pure:
 * the endpoints given are already neither deleted nor disabled.
 */
export function matchEndpoints(
  events: FanOutEvent[],
  endpoints: FanOutEndpoint[],
  onlyTo: ReadonlyMap<string, string> = new Map(),
): { event: FanOutEvent; endpoint: FanOutEndpoint }[] {
  return events.flatMap((event) =>
    endpoints
      .filter((e) => {
        if (e.app_id !== event.app_id) return false;
        const only = onlyTo.get(event.id);
        if (only !== undefined) return only === e.id;
        return e.event_types.length === 0 || e.event_types.includes(event.type);
      })
      .map((endpoint) => ({ event, endpoint })),
  );
}
