import { paths } from "../portal/data.ts";
import { Link, setQuery, useLocation } from "../router.tsx";
import type { Attempt } from "../types.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { appBase } from "./AppView.tsx";
import { POLL_MS } from "./EventsAcross.tsx";
import { AppFilter, EndpointFilter, StatusFilter } from "./Filters.tsx";
import { appLabel, useApps } from "./model.ts";

const ATTEMPT_STATUSES = ["pending", "succeeded", "failed"] as const;

/** Delivery attempts across every app, newest first, each opening in its app's view. */
export function AttemptsAcross() {
  const { query } = useLocation();
  const filter = {
    app: query.get("app") ?? "",
    status: query.get("status") ?? "",
    endpoint: query.get("endpoint") ?? "",
  };
  const apps = useApps();
  const list = usePagedList<Attempt>("/v3/attempts", filter, POLL_MS);
  const filtered = Object.values(filter).some(Boolean);
  return (
    <>
      <PageHeader title="Attempts" />
      <div className="filters">
        <AppFilter value={filter.app} onChange={(app) => setQuery({ app, endpoint: undefined })} />
        <StatusFilter
          statuses={ATTEMPT_STATUSES}
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
          <Loading label="Loading attempts…" />
        )
      ) : list.data.data.length ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Attempts, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Response</th>
                <th scope="col" className="hide-narrow">
                  App
                </th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Status value={a.status} />{" "}
                    <Link href={paths.attempt(appBase(a.app), a.id)}>Attempt {a.attempt_number}</Link>
                  </td>
                  <td className="mono">{a.url}</td>
                  <td>
                    {a.response_status ??
                      (a.error ? <span>{a.error}</span> : <span className="muted">—</span>)}
                    {a.duration_ms !== null ? <div className="muted small">{a.duration_ms} ms</div> : null}
                  </td>
                  <td className="hide-narrow">
                    <Link href={appBase(a.app)}>{appLabel(apps.data, a.app)}</Link>
                  </td>
                  <td>
                    <Time value={a.completed_at ?? a.scheduled_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Empty title={filtered ? "No attempts match these filters" : "No attempts yet"}>
          {filtered
            ? "Try another filter, or clear them."
            : "Each try to deliver an event to an endpoint is listed here."}
        </Empty>
      )}
      <Pager pager={list.pager} label="Attempts" />
    </>
  );
}
