import type { Delivery, Event as HeraldEvent } from "@herald/sdk/types";
import { useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import { useResource } from "../ui/hooks.ts";
import { JsonBlock } from "../ui/Json.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Status } from "../ui/Status.tsx";
import { Relative, Time } from "../ui/Time.tsx";
import { AttemptsTable } from "./AttemptsTable.tsx";
import { byId, endpointLabel, paths, useAppEndpoints } from "./data.ts";

/** A delivery that will not change on its own: settled, with no attempt to come. */
const isFinal = (d: Delivery) => d.status !== "pending" && !d.next_attempt_at;
/** How long after an event without deliveries to keep looking for them (its fan-out). */
const FAN_OUT_MS = 60_000;

/** "1 succeeded, 2 retrying": the deliveries' states, for the live region. */
function summary(deliveries: Delivery[]): string {
  const counts = new Map<string, number>();
  for (const d of deliveries) counts.set(d.status, (counts.get(d.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
}

/**
 * One event: its payload, its deliveries (kept fresh every 2 s until every one is final), and
 * every attempt made for it.
 */
export function EventDetail({ id }: { id: string }) {
  const { appId, base } = useAppScope();
  const [final, setFinal] = useState(false);
  const event = useResource(
    async () => {
      const found = await api.get<HeraldEvent>(`/v3/events/${encodeURIComponent(id)}`);
      const young = Date.now() - new Date(found.created_at).getTime() < FAN_OUT_MS;
      setFinal(found.deliveries.length ? found.deliveries.every(isFinal) : !young);
      return found;
    },
    [id],
    final ? undefined : 2000,
  );
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
        <p className="visually-hidden" aria-live="polite">
          {e.deliveries.length ? `Deliveries: ${summary(e.deliveries)}.` : ""}
        </p>
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
              <tbody>
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
        {e.data_erased_at ? (
          <p className="muted" data-testid="payload-erased">
            Payload erased <Time value={e.data_erased_at} />. Nothing more is sent for this event.
          </p>
        ) : (
          <JsonBlock value={e.data} label="Event payload" />
        )}
      </section>
      <AttemptsTable filter={{ event: e.id }} title="Attempts" show="endpoint" />
    </>
  );
}
