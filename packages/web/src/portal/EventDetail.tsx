import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import type { HeraldEvent } from "../types.ts";
import { useResource } from "../ui/hooks.ts";
import { JsonBlock } from "../ui/Json.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Status } from "../ui/Status.tsx";
import { Relative, Time } from "../ui/Time.tsx";
import { AttemptsTable } from "./AttemptsTable.tsx";
import { byId, endpointLabel, paths, useAppEndpoints } from "./data.ts";

/** One event: its payload, its deliveries (kept fresh), and every attempt made for it. */
export function EventDetail({ id }: { id: string }) {
  const { appId, base } = useAppScope();
  const event = useResource(() => api.get<HeraldEvent>(`/v3/events/${encodeURIComponent(id)}`), [id], 2000);
  const endpoints = useAppEndpoints(appId);
  const named = byId(endpoints.data);
  const e = event.data;
  const back = (
    <p className="breadcrumb">
      <Link href={paths.events(base)}>← Events</Link>
    </p>
  );
  if (!e)
    return (
      <>
        {back}
        {event.error ? (
          <ErrorNotice error={event.error} onRetry={event.reload} />
        ) : (
          <Loading label="Loading the event…" />
        )}
      </>
    );
  return (
    <>
      {back}
      <PageHeader title={<span className="mono">{e.type}</span>} />
      <ErrorNotice error={event.error} onRetry={event.reload} />
      <section className="card" aria-labelledby="event-props">
        <h2 id="event-props" className="visually-hidden">
          Properties
        </h2>
        <dl className="props">
          <dt>Id</dt>
          <dd className="mono">{e.id}</dd>
          <dt>Type</dt>
          <dd className="mono">{e.type}</dd>
          <dt>Created</dt>
          <dd>
            <Time value={e.created_at} />
          </dd>
        </dl>
      </section>
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Deliveries</h2>
        {e.deliveries.length === 0 ? (
          <p className="muted">No endpoint receives this event (or it is still being fanned out).</p>
        ) : (
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Deliveries of this event</caption>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col" className="hide-narrow">
                    Last attempt
                  </th>
                  <th scope="col">Next attempt</th>
                </tr>
              </thead>
              <tbody aria-live="polite">
                {e.deliveries.map((d) => (
                  <tr key={d.endpoint}>
                    <td>
                      <Link href={paths.endpoint(base, d.endpoint)}>
                        {endpointLabel(named.get(d.endpoint), d.endpoint)}
                      </Link>
                    </td>
                    <td>
                      <Status value={d.status} />
                    </td>
                    <td>{d.attempts}</td>
                    <td className="hide-narrow">
                      <Time value={d.last_attempt_at} fallback="none yet" />
                    </td>
                    <td>
                      {d.next_attempt_at ? (
                        <>
                          <Time value={d.next_attempt_at} />{" "}
                          <span className="muted">
                            (<Relative value={d.next_attempt_at} />)
                          </span>
                        </>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="payload-title">
        <h2 id="payload-title">Payload</h2>
        <JsonBlock value={e.data} label="Event payload" />
      </section>
      <AttemptsTable filter={{ event: e.id }} title="Attempts" show="endpoint" />
    </>
  );
}
