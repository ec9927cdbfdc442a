import type { Delivery, Endpoint, Event as HeraldEvent } from "@herald/sdk/types";
import type { ReactNode } from "react";
import { useAppScope } from "../appScope.tsx";
import { Link, setQuery, useLocation } from "../router.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { byId, endpointLabel, paths, useAppEndpoints } from "./data.ts";
import { EventFilters, eventFiltersFrom, NO_EVENT_FILTERS } from "./EventFilters.tsx";

/** The app's events, newest first, with each delivery's status; refreshed every 2 s. */
export function EventsList() {
  const { appId, base } = useAppScope();
  return (
    <EventsBrowser
      app={appId}
      openIn={() => base}
      pollMs={POLL_MS.appEvents}
      emptyHint="Events this app sends show here, with the status of each delivery."
    />
  );
}

/**
 * Events newest first, filtered through the address: one app's (the portal), or every app's
 * (the dashboard, `app` empty until its app filter picks one), each opening in its app's views.
 */
export function EventsBrowser({
  app,
  openIn,
  pollMs,
  emptyHint,
  appFilter,
  appColumn,
  includeArchived,
}: {
  app: string;
  /** Where an event of this app opens: the portal's base, or the app's view in the dashboard. */
  openIn: (appId: string) => string;
  pollMs: number;
  emptyHint: string;
  /** The dashboard's app filter, first among the filters. */
  appFilter?: ReactNode;
  /** The dashboard's column naming each event's app (hidden on narrow screens). */
  appColumn?: (appId: string) => ReactNode;
  includeArchived?: boolean;
}) {
  const { query } = useLocation();
  const filters = eventFiltersFrom(query);
  const filtered = Boolean(filters.status || filters.endpoint || filters.type);
  const list = usePagedList<HeraldEvent>("/v3/events", { app, ...filters }, pollMs);
  // Without an app, the account's first 100 endpoints: enough to name most deliveries.
  const endpoints = useAppEndpoints(app);
  const named = byId(endpoints.data);
  const events = list.data?.data;
  return (
    <>
      <PageHeader title="Events" />
      <EventFilters
        values={filters}
        endpoints={app ? (endpoints.data ?? []) : null}
        onChange={setQuery}
        includeArchived={includeArchived}
      >
        {appFilter}
      </EventFilters>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      <p className="visually-hidden" aria-live="polite">
        {events ? summary(events) : ""}
      </p>
      {!events ? (
        list.error ? null : (
          <Loading label="Loading events…" />
        )
      ) : events.length === 0 && !list.pager.hasPrevious ? (
        <Empty title={filtered ? "No event matches these filters" : "No events yet"}>
          {filtered ? (
            <button type="button" className="button-link" onClick={() => setQuery(NO_EVENT_FILTERS)}>
              Clear the filters
            </button>
          ) : (
            emptyHint
          )}
        </Empty>
      ) : (
        <div className="table-wrap">
          <table className="events-table">
            <caption className="visually-hidden">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Deliveries</th>
                {appColumn ? (
                  <th scope="col" className="hide-narrow">
                    App
                  </th>
                ) : null}
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <tr key={e.id} data-event={e.id}>
                  <td>
                    <Link href={paths.event(openIn(e.app), e.id)} className="event-type mono">
                      {e.type}
                    </Link>
                    <div className="muted mono event-id">{e.id}</div>
                  </td>
                  <td>
                    <Deliveries deliveries={e.deliveries} named={named} />
                  </td>
                  {appColumn ? <td className="hide-narrow">{appColumn(e.app)}</td> : null}
                  <td>
                    <Time value={e.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={list.pager} label="Events" />
    </>
  );
}

export function Deliveries({ deliveries, named }: { deliveries: Delivery[]; named: Map<string, Endpoint> }) {
  if (!deliveries.length) return <span className="muted">No endpoint receives it</span>;
  return (
    <ul className="delivery-list">
      {deliveries.map((d) => (
        <li key={d.endpoint}>
          <Status value={d.status} />{" "}
          <span className="delivery-endpoint">{endpointLabel(named.get(d.endpoint), d.endpoint)}</span>
        </li>
      ))}
    </ul>
  );
}

/** What a screen reader hears when statuses change: counts, not every row. */
function summary(events: HeraldEvent[]): string {
  const counts = new Map<string, number>();
  for (const e of events) for (const d of e.deliveries) counts.set(d.status, (counts.get(d.status) ?? 0) + 1);
  const parts = [...counts].map(([status, n]) => `${n} ${status}`);
  return `${events.length} events shown${parts.length ? `; deliveries: ${parts.join(", ")}` : ""}.`;
}
