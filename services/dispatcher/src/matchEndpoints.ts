import { Budget, endpointTakes, storedFilter } from "@herald/contracts/filter";
import type { FanOutEndpoint, FanOutEvent } from "@herald/db/lifecycle";

/**
 * Which endpoints receive which events: those of the event's app whose `event_types` list the
 * event's type (or every type when the list is empty) and whose `filter`, if any, matches the
 * event (`{ id, type, app, data }`). A test event goes to its one endpoint only (`onlyTo`),
 * whatever that one lists or filters: the gateway chose its type (for an operational endpoint,
 * whose list holds Herald's types only, one of the account's ordinary types). Pure: the
 * endpoints given are already neither deleted nor disabled.
 */
export function matchEndpoints(
  events: FanOutEvent[],
  endpoints: FanOutEndpoint[],
  onlyTo: ReadonlyMap<string, string> = new Map(),
): { event: FanOutEvent; endpoint: FanOutEndpoint }[] {
  // Compiled once a batch.
  const filters = new Map(endpoints.map((e) => [e.id, storedFilter(e.filter)]));
  return events.flatMap((event) => {
    // One budget an event, whatever its app's filters: a costly one is not applied, never slow.
    const budget = new Budget();
    const seen = { id: event.id, type: event.type, app: event.app_id, data: event.data };
    return endpoints
      .filter((e) => {
        if (e.app_id !== event.app_id) return false;
        const only = onlyTo.get(event.id);
        if (only !== undefined) return only === e.id;
        const takes = endpointTakes(e.event_types, filters.get(e.id), seen, budget);
        return takes === "yes" || takes === "unchecked";
      })
      .map((endpoint) => ({ event, endpoint }));
  });
}
