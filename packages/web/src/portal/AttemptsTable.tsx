import type { Attempt, Endpoint } from "@herald/sdk/types";
import type { ReactNode } from "react";
import type { Query } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import { isDestination } from "../ui/destinationUrl.ts";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { POLL_MS } from "../ui/poll.ts";
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
  const endpoints = useAppEndpoints(appId);
  return (
    <section aria-labelledby="attempts-title">
      <h2 id="attempts-title">{title}</h2>
      <AttemptsList
        query={{ ...filter, limit: 10 }}
        caption={title}
        show={show}
        endpoints={endpoints.data}
        openIn={() => base}
        pollMs={POLL_MS.attempts}
      />
    </section>
  );
}

/**
 * Attempts newest first, paged: one app's, or in the dashboard every app's, each opening in its
 * app's views.
 */
export function AttemptsList({
  query,
  caption,
  show,
  endpoints,
  openIn,
  pollMs,
  filtered = false,
  appColumn,
}: {
  query: Query;
  caption: string;
  show: "event" | "endpoint";
  /** To name endpoints; one not among them goes by the URL its attempt was sent to. */
  endpoints: Endpoint[] | undefined;
  openIn: (appId: string) => string;
  pollMs: number;
  /** Whether the user narrowed the list (the empty state then says so). */
  filtered?: boolean;
  /** The dashboard's column naming each attempt's app (hidden on narrow screens). */
  appColumn?: (appId: string) => ReactNode;
}) {
  const list = usePagedList<Attempt>("/v3/attempts", query, pollMs);
  const named = byId(endpoints);
  return (
    <>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading attempts…" />
        )
      ) : list.data.data.length === 0 && !list.pager.hasPrevious ? (
        <Empty title={filtered ? "No attempt matches these filters" : "No attempts yet"}>
          {filtered
            ? "Try another filter, or clear them."
            : "Attempts show here as soon as Herald sends a request."}
        </Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{caption}</caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">{show === "event" ? "Event" : "Endpoint"}</th>
                <th scope="col">Response</th>
                <th scope="col" className="hide-narrow">
                  Duration
                </th>
                {appColumn ? (
                  <th scope="col" className="hide-narrow">
                    App
                  </th>
                ) : null}
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    {/* The id tells apart the attempts numbered 1 of different events. */}
                    <Link href={paths.attempt(openIn(a.app), a.id)}>
                      Attempt {a.attempt_number}
                      <span className="visually-hidden">, {a.id}</span>
                    </Link>
                  </td>
                  <td>
                    <Status value={a.status} />
                  </td>
                  <td className="mono">
                    {show === "event" ? (
                      <Link href={paths.event(openIn(a.app), a.event)}>{a.event}</Link>
                    ) : (
                      <Link href={paths.endpoint(openIn(a.app), a.endpoint)}>
                        {attemptEndpoint(a, named.get(a.endpoint))}
                      </Link>
                    )}
                  </td>
                  <td>{responseSummary(a)}</td>
                  <td className="hide-narrow">{a.duration_ms === null ? "—" : `${a.duration_ms} ms`}</td>
                  {appColumn ? <td className="hide-narrow">{appColumn(a.app)}</td> : null}
                  <td>
                    <Time value={a.completed_at ?? a.scheduled_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={list.pager} label={caption} />
    </>
  );
}

/** The endpoint by its name when known, else by the URL the attempt was sent to. */
function attemptEndpoint(a: Attempt, endpoint: Endpoint | undefined): string {
  return endpoint ? endpointLabel(endpoint, a.endpoint) : a.url;
}

/**
 * An attempt's outcome in a few words: the HTTP status of a webhook's; a destination's receipt
 * (where the message went, in that type's terms: "stream orders, entry 1700-0"), as it has no
 * HTTP status; else its error kind.
 */
export function responseSummary(a: Attempt): string {
  if (a.status === "pending") return a.sent_at ? "In flight" : "Waiting";
  if (a.status === "cancelled") return "Cancelled by its transformation";
  if (a.status === "succeeded" && a.response_status === null && isDestination(a.url))
    return a.response_body ? `Delivered to ${a.response_body}` : "Delivered";
  if (a.response_status !== null)
    return `HTTP ${a.response_status}${a.error && a.error !== "http_error" ? ` (${a.error})` : ""}`;
  return a.error ?? "—";
}
