import type { App, EndpointHealth } from "@herald/sdk/types";
import { api, type List } from "../api.ts";
import { paths } from "../portal/data.ts";
import { Link } from "../router.tsx";
import { DeliveryStateLine } from "../ui/DeliveryState.tsx";
import { DestinationLabel } from "../ui/DestinationLabel.tsx";
import { isDestination } from "../ui/destinationUrl.ts";
import { percent } from "../ui/format.ts";
import { useResource } from "../ui/hooks.ts";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { Time } from "../ui/Time.tsx";
import { appBase } from "./AppView.tsx";
import { appLabel } from "./model.ts";

/**
 * The account's endpoints, the failing ones first, then the paused ones (nothing reaches them),
 * each linking to it in its app's view.
 */
export function FailingEndpoints({ app, apps }: { app: string; apps: App[] | undefined }) {
  const health = useResource(
    () => api.get<List<EndpointHealth>>("/v3/stats/endpoints", { app, limit: 10 }),
    [app],
    POLL_MS.health,
  );
  if (!health.data)
    return health.error ? (
      <ErrorNotice error={health.error} onRetry={health.reload} />
    ) : (
      <Loading label="Loading endpoint health…" />
    );
  const rows = health.data.data;
  if (!rows.length)
    return (
      <Empty title="No endpoints yet">Endpoints your customers add in their portal are listed here.</Empty>
    );
  const failing = rows.filter((r) => r.failing_since).length;
  const paused = rows.filter((r) => r.delivery_state.state === "paused").length;
  return (
    <>
      {health.error ? <ErrorNotice error={health.error} /> : null}
      <p className="muted" role="status">
        {failing ? `${failing} failing` : "None failing"}
        {paused ? ` · ${paused} paused` : ""}
        {health.data.has_more ? " · showing the first 10" : ""}
      </p>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Endpoints, failing first</caption>
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Health</th>
              <th scope="col">Success rate (24 h)</th>
              <th scope="col" className="hide-narrow">
                App
              </th>
              <th scope="col" className="hide-narrow">
                Last attempt
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.endpoint}>
                <td>
                  <Link href={paths.endpoint(appBase(r.app), r.endpoint)}>{r.description || r.url}</Link>
                  {r.description ? <div className="mono muted">{r.url}</div> : null}
                  {isDestination(r.url) ? (
                    <div>
                      <DestinationLabel url={r.url} />
                    </div>
                  ) : null}
                </td>
                <td>
                  <Health row={r} />
                  <DeliveryStateLine value={r.delivery_state} />
                </td>
                <td>
                  {percent(r.success_rate)}
                  <div className="muted small">
                    {r.succeeded} ok · {r.failed} failed
                  </div>
                </td>
                <td className="hide-narrow">
                  <Link href={appBase(r.app)}>{appLabel(apps, r.app)}</Link>
                </td>
                <td className="hide-narrow">
                  <Time value={r.last_attempt_at} fallback="never" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function Health({ row }: { row: EndpointHealth }) {
  if (row.disabled)
    return (
      <span className="badge badge-disabled">
        <span aria-hidden="true">⏸</span> disabled
      </span>
    );
  if (row.failing_since)
    return (
      <>
        <span className="badge badge-failed">
          <span aria-hidden="true">✕</span> failing
        </span>
        <div className="muted small">
          since <Time value={row.failing_since} />
        </div>
      </>
    );
  if (row.succeeded + row.failed === 0) return <span className="badge badge-pending">no attempts</span>;
  return (
    <span className="badge badge-succeeded">
      <span aria-hidden="true">✓</span> healthy
    </span>
  );
}
