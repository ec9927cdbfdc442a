import { paths } from "../portal/data.ts";
import { Link, setQuery, useLocation } from "../router.tsx";
import { DELIVERY_STATUSES, type HeraldEvent } from "../types.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { appBase } from "./AppView.tsx";
import { AppFilter, EndpointFilter, StatusFilter, TypeFilter } from "./Filters.tsx";
import { appLabel, useApps } from "./model.ts";

/** 5 s: new events and their deliveries' progress show without reloading. */
export const POLL_MS = 5000;

/** Events across every app, newest first, each opening in its app's view. */
export function EventsAcross() {
  const { query } = useLocation();
  const filter = {
    app: query.get("app") ?? "",
    type: query.get("type") ?? "",
    status: query.get("status") ?? "",
    endpoint: query.get("endpoint") ?? "",
  };
  const apps = useApps();
  const list = usePagedList<HeraldEvent>("/v3/events", filter, POLL_MS);
  const filtered = Object.values(filter).some(Boolean);
  return (
    <>
      <PageHeader title="Events" />
      <div className="filters">
        <AppFilter value={filter.app} onChange={(app) => setQuery({ app, endpoint: undefined })} />
        <TypeFilter value={filter.type} onChange={(type) => setQuery({ type })} />
        <StatusFilter
          statuses={DELIVERY_STATUSES}
          value={filter.status}
          onChange={(status) => setQuery({ status })}
        />
        <EndpointFilter
          app={filter.app}
          value={filter.endpoint}
          onChange={(endpoint) => setQuery({ endpoint })}
        />
      </div>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading events…" />
        )
      ) : list.data.data.length ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Deliveries</th>
                <th scope="col" className="hide-narrow">
                  App
                </th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((event) => (
                <tr key={event.id}>
                  <td>
                    <Link className="mono" href={paths.event(appBase(event.app), event.id)}>
                      {event.type}
                    </Link>
                    <div className="mono muted small">{event.id}</div>
                  </td>
                  <td>
                    <DeliverySummary event={event} />
                  </td>
                  <td className="hide-narrow">
                    <Link href={appBase(event.app)}>{appLabel(apps.data, event.app)}</Link>
                  </td>
                  <td>
                    <Time value={event.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Empty title={filtered ? "No events match these filters" : "No events yet"}>
          {filtered
            ? "Try another filter, or clear them."
            : "Events you send with POST /v3/events appear here."}
        </Empty>
      )}
      <Pager pager={list.pager} label="Events" />
    </>
  );
}

/** How many of an event's deliveries are in each status. */
function DeliverySummary({ event }: { event: HeraldEvent }) {
  if (!event.deliveries.length) return <span className="muted">No endpoint receives it</span>;
  const counts = new Map<string, number>();
  for (const d of event.deliveries) counts.set(d.status, (counts.get(d.status) ?? 0) + 1);
  return (
    <span className="badges">
      {[...counts].map(([status, n]) => (
        <span key={status}>
          <Status value={status} />
          {n > 1 ? <span className="muted small"> ×{n}</span> : null}
        </span>
      ))}
    </span>
  );
}
