import type { Endpoint, EndpointHealth as HealthItem } from "@herald/sdk/types";
import { api, type List } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import { DeliveryStateLine } from "../ui/DeliveryState.tsx";
import { DestinationLabel } from "../ui/DestinationLabel.tsx";
import { useResource } from "../ui/hooks.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { Status } from "../ui/Status.tsx";
import { paths } from "./data.ts";
import { EndpointHealth, HealthLine } from "./EndpointHealth.tsx";

const HEALTH_LIMIT = 100;

/**
 * The app's endpoints, each with its state, why deliveries to it wait (when they do), and its
 * health over the last day.
 */
export function EndpointsList() {
  const { appId, base, readOnly } = useAppScope();
  const list = usePagedList<Endpoint>("/v3/endpoints", { app: appId }, 10_000);
  // Every endpoint's health in one request (not one per card), refreshed with the list.
  const health = useResource(
    () => api.get<List<HealthItem>>("/v3/stats/endpoints", { app: appId, limit: HEALTH_LIMIT }),
    [appId],
    POLL_MS.health,
  );
  const healthOf = new Map((health.data?.data ?? []).map((h) => [h.endpoint, h]));
  /** The line for one card; an app with more endpoints than one health page loads the rest singly. */
  const healthLine = (id: string) => {
    const found = healthOf.get(id);
    if (found || !health.data?.has_more)
      return <HealthLine stats={found} unavailable={Boolean(health.error)} />;
    return <EndpointHealth id={id} />;
  };
  const create = readOnly ? null : (
    <Link className="button" href={paths.newEndpoint(base)}>
      Add endpoint
    </Link>
  );
  return (
    <>
      <PageHeader title="Endpoints">{create}</PageHeader>
      <p className="muted lede">
        The URLs this app's events are sent to. Each one is signed with its own secret.
      </p>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading endpoints…" />
        )
      ) : list.data.data.length === 0 && !list.pager.hasPrevious ? (
        <Empty title="No endpoints yet">
          {readOnly ? (
            "Endpoints added to this app will show here."
          ) : (
            <>
              <p>Add the URL where you want to receive webhooks.</p>
              {create}
            </>
          )}
        </Empty>
      ) : (
        <ul className="endpoint-list" aria-label="Endpoints">
          {list.data.data.map((endpoint) => (
            <li key={endpoint.id} className="card endpoint-card">
              <div className="endpoint-card-head">
                <Link href={paths.endpoint(base, endpoint.id)} className="endpoint-url mono">
                  {endpoint.url}
                </Link>
                <span className="endpoint-card-labels">
                  <DestinationLabel url={endpoint.url} />
                  <Status value={endpoint.disabled ? "disabled" : "enabled"} />
                </span>
              </div>
              {endpoint.description ? <p className="endpoint-description">{endpoint.description}</p> : null}
              <p className="muted endpoint-types">
                {endpoint.event_types.length
                  ? `Receives ${endpoint.event_types.join(", ")}`
                  : "Receives every event type"}
                {endpoint.filter ? ", only those its filter matches" : ""}
              </p>
              <DeliveryStateLine value={endpoint.delivery_state} />
              {healthLine(endpoint.id)}
            </li>
          ))}
        </ul>
      )}
      <Pager pager={list.pager} label="Endpoints" />
    </>
  );
}
