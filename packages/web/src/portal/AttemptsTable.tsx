import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import type { Attempt } from "../types.ts";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { byId, endpointLabel, paths, useAppEndpoints } from "./data.ts";

/** Attempts of one endpoint or one event, newest first, kept fresh while shown. */
export function AttemptsTable({
  filter,
  title,
  show,
}: {
  filter: { endpoint: string } | { event: string };
  title: string;
  /** The other side of each attempt: its event (on an endpoint's page) or its endpoint. */
  show: "event" | "endpoint";
}) {
  const { appId, base } = useAppScope();
  const list = usePagedList<Attempt>("/v3/attempts", { ...filter, limit: 10 }, 3000);
  const endpoints = useAppEndpoints(appId);
  const named = byId(endpoints.data);
  return (
    <section aria-labelledby="attempts-title">
      <h2 id="attempts-title">{title}</h2>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading attempts…" />
        )
      ) : list.data.data.length === 0 && !list.pager.hasPrevious ? (
        <Empty title="No attempts yet">Attempts show here as soon as Herald sends a request.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">{show === "event" ? "Event" : "Endpoint"}</th>
                <th scope="col">Response</th>
                <th scope="col" className="hide-narrow">
                  Duration
                </th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link
                      href={paths.attempt(base, a.id)}
                      aria-label={`Attempt ${a.attempt_number}, ${a.id}`}
                    >
                      #{a.attempt_number}
                    </Link>
                  </td>
                  <td>
                    <Status value={a.status} />
                  </td>
                  <td className="mono">
                    {show === "event" ? (
                      <Link href={paths.event(base, a.event)}>{a.event}</Link>
                    ) : (
                      <Link href={paths.endpoint(base, a.endpoint)}>
                        {endpointLabel(named.get(a.endpoint), a.endpoint)}
                      </Link>
                    )}
                  </td>
                  <td>{responseSummary(a)}</td>
                  <td className="hide-narrow">{a.duration_ms === null ? "—" : `${a.duration_ms} ms`}</td>
                  <td>
                    <Time value={a.completed_at ?? a.scheduled_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={list.pager} label={title} />
    </section>
  );
}

export function responseSummary(a: Attempt): string {
  if (a.status === "pending") return "In flight";
  if (a.response_status !== null)
    return `HTTP ${a.response_status}${a.error && a.error !== "http_error" ? ` (${a.error})` : ""}`;
  return a.error ?? "—";
}
