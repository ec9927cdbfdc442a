import type { EventType } from "@herald/sdk/types";
import { Link, setQuery, useLocation } from "../router.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { Time } from "../ui/Time.tsx";

export const eventTypePath = (name: string) => `/dashboard/event-types/${encodeURIComponent(name)}`;

/** The account's event types by name; archived ones on request. */
export function EventTypes() {
  const { query } = useLocation();
  const archived = query.get("archived") === "1";
  const list = usePagedList<EventType>("/v3/event-types", { limit: 50, include_archived: archived });
  const types = list.data?.data ?? [];
  return (
    <>
      <PageHeader title="Event types">
        <Link className="button" href="/dashboard/event-types/new">
          New event type
        </Link>
      </PageHeader>
      <div className="filters">
        <label className="checkbox-row">
          <input
            type="checkbox"
            checked={archived}
            onChange={(e) => setQuery({ archived: e.target.checked ? "1" : undefined })}
          />
          Show archived types
        </label>
      </div>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading event types…" />
        )
      ) : types.length || list.pager.hasPrevious ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Event types</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Schema</th>
                <th scope="col" className="hide-narrow">
                  Updated
                </th>
              </tr>
            </thead>
            <tbody>
              {types.map((t) => (
                <tr key={t.name}>
                  <td>
                    <Link className="mono" href={eventTypePath(t.name)}>
                      {t.name}
                    </Link>{" "}
                    {t.archived ? <span className="badge badge-dropped">archived</span> : null}
                  </td>
                  <td>{t.description || <span className="muted">—</span>}</td>
                  <td>{t.schema ? "Yes" : <span className="muted">None</span>}</td>
                  <td className="hide-narrow">
                    <Time value={t.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Empty title={archived ? "No event types" : "No event types yet"}>
          Event types name what you send (<code>invoice.paid</code>), and their schema tells your customers
          what each event holds.
        </Empty>
      )}
      <Pager pager={list.pager} label="Event types" />
    </>
  );
}
