import type { Endpoint } from "@herald/sdk/types";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import { DeliveryStateLine } from "../ui/DeliveryState.tsx";
import { DestinationLabel } from "../ui/DestinationLabel.tsx";
import { isDestination } from "../ui/destinationUrl.ts";
import { counted } from "../ui/format.ts";
import { useResource } from "../ui/hooks.ts";
import { JsonBlock } from "../ui/Json.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { AttemptsTable } from "./AttemptsTable.tsx";
import { paths } from "./data.ts";
import { EndpointActions } from "./EndpointActions.tsx";
import { EndpointHealth } from "./EndpointHealth.tsx";
import { ReplayPanel } from "./ReplayPanel.tsx";
import { SecretPanel } from "./SecretPanel.tsx";
import { TestEventPanel } from "./TestEventPanel.tsx";

/** One endpoint: its properties, limits, health, secret, test events, replays and recent attempts. */
export function EndpointDetail({ id }: { id: string }) {
  const { base, readOnly } = useAppScope();
  // Refreshed as its health is: a pause or slow-down begins and ends on its own.
  const endpoint = useResource(
    () => api.get<Endpoint>(`/v3/endpoints/${encodeURIComponent(id)}`),
    [id],
    POLL_MS.health,
  );
  const e = endpoint.data;
  const back = (
    <p className="breadcrumb">
      <Link href={paths.endpoints(base)}>← Endpoints</Link>
    </p>
  );
  if (!e)
    return (
      <>
        {back}
        {endpoint.error ? (
          <ErrorNotice error={endpoint.error} onRetry={endpoint.reload} />
        ) : (
          <Loading label="Loading the endpoint…" />
        )}
      </>
    );
  return (
    <>
      {back}
      <PageHeader title={<span className="mono">{e.url}</span>}>
        <EndpointActions endpoint={e} onChanged={endpoint.reload} />
      </PageHeader>
      <ErrorNotice error={endpoint.error} onRetry={endpoint.reload} />
      <section className="card" aria-labelledby="props-title">
        <h2 id="props-title" className="visually-hidden">
          Properties
        </h2>
        <EndpointHealth id={e.id} />
        <dl className="props">
          <dt>Type</dt>
          <dd>
            <DestinationLabel url={e.url} />
          </dd>
          <dt>Status</dt>
          <dd>
            <span aria-live="polite">
              <Status value={e.disabled ? "disabled" : "enabled"} />
            </span>
            {e.disabled && e.disabled_reason ? <span className="muted"> {e.disabled_reason}</span> : null}
            <DeliveryStateLine value={e.delivery_state} eventHref={(event) => paths.event(base, event)} />
          </dd>
          <dt>Description</dt>
          <dd>{e.description || <span className="muted">None</span>}</dd>
          <dt>Event types</dt>
          <dd>
            {e.event_types.length ? (
              <ul className="inline-list">
                {e.event_types.map((t) => (
                  <li key={t} className="mono">
                    {t}
                  </li>
                ))}
              </ul>
            ) : (
              "Every event type"
            )}
          </dd>
          <dt>Filter</dt>
          <dd>
            {e.filter ? (
              <JsonBlock value={e.filter} label="The endpoint's filter" />
            ) : (
              <span className="muted">None: every event of its types</span>
            )}
          </dd>
          <dt>Transformation</dt>
          <dd>
            {e.transformation ? (
              <JsonBlock value={e.transformation} label="The endpoint's transformation" />
            ) : (
              <span className="muted">None: events are sent as they are</span>
            )}
          </dd>
          <dt>Rate limit</dt>
          <dd>
            {e.rate_limit === null ? (
              <span className="muted">No limit</span>
            ) : (
              `${counted(e.rate_limit, "delivery", "deliveries")} a second`
            )}
          </dd>
          <dt>Max in flight</dt>
          <dd>
            {e.max_in_flight === null ? (
              <span className="muted">Herald's default</span>
            ) : (
              `${counted(e.max_in_flight, "attempt", "attempts")} at once`
            )}
          </dd>
          <dt>Order</dt>
          <dd>
            {e.ordering === "fifo" ? (
              "In order (FIFO): one delivery at a time"
            ) : (
              <span className="muted">Any order</span>
            )}
          </dd>
          <dt>Authentication</dt>
          <dd>
            {e.tls || e.oauth2 ? (
              <ul className="plain-list">
                {e.tls?.client_certificate ? (
                  <li>
                    Client certificate <span className="mono">{e.tls.client_certificate.subject}</span>, until{" "}
                    <Time value={e.tls.client_certificate.not_after} />
                  </li>
                ) : null}
                {e.tls?.ca_certificate ? (
                  <li>
                    Trusts the CA <span className="mono">{e.tls.ca_certificate.subject}</span>
                  </li>
                ) : null}
                {e.oauth2 ? (
                  <li>
                    OAuth2 client <span className="mono">{e.oauth2.client_id}</span> at{" "}
                    <span className="mono">{e.oauth2.token_url}</span>
                    {e.oauth2.scope ? (
                      <>
                        , scope <span className="mono">{e.oauth2.scope}</span>
                      </>
                    ) : null}
                  </li>
                ) : null}
              </ul>
            ) : isDestination(e.url) && e.url.includes("//[redacted]@") ? (
              "The credentials in the URL (write-only, shown as [redacted]), and the signature"
            ) : (
              <span className="muted">The signature only</span>
            )}
          </dd>
          <dt>Custom headers</dt>
          <dd>
            {Object.keys(e.headers).length ? (
              <ul className="plain-list">
                {Object.entries(e.headers).map(([name, value]) => (
                  <li key={name} className="mono">
                    {name}: {value}
                  </li>
                ))}
              </ul>
            ) : (
              <span className="muted">None</span>
            )}
          </dd>
          <dt>Id</dt>
          <dd className="mono">{e.id}</dd>
          <dt>Created</dt>
          <dd>
            <Time value={e.created_at} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time value={e.updated_at} />
          </dd>
        </dl>
      </section>
      <SecretPanel endpointId={e.id} />
      {readOnly ? null : (
        <div className="grid">
          <TestEventPanel endpoint={e} />
          <ReplayPanel endpoint={e} />
        </div>
      )}
      <AttemptsTable filter={{ endpoint: e.id }} title="Recent attempts" show="event" />
    </>
  );
}
