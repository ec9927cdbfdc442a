import type { AttemptStats } from "@herald/sdk/types";
import { api } from "../api.ts";
import { setQuery, useLocation } from "../router.tsx";
import { AttemptsChart } from "../ui/AttemptsChart.tsx";
import { percent } from "../ui/format.ts";
import { useResource } from "../ui/hooks.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { FailingEndpoints } from "./FailingEndpoints.tsx";
import { AppFilter } from "./Filters.tsx";
import { useApps } from "./model.ts";

export function Overview() {
  const { query } = useLocation();
  const app = query.get("app") ?? "";
  const apps = useApps();
  return (
    <>
      <PageHeader title="Overview" />
      <div className="filters">
        <AppFilter apps={apps.data} value={app} onChange={(v) => setQuery({ app: v })} />
      </div>
      <section className="card" aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts in the last hour</h2>
        <AttemptsCard app={app} />
      </section>
      <section className="card" aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints, failing first</h2>
        <FailingEndpoints app={app} apps={apps.data} />
      </section>
    </>
  );
}

function AttemptsCard({ app }: { app: string }) {
  const stats = useResource(
    () => api.get<AttemptStats>("/v3/stats/attempts", { window: "1h", app }),
    [app],
    POLL_MS.stats,
  );
  if (!stats.data)
    return stats.error ? (
      <ErrorNotice error={stats.error} onRetry={stats.reload} />
    ) : (
      <Loading label="Loading attempt statistics…" />
    );
  const buckets = stats.data.data;
  const succeeded = buckets.reduce((n, b) => n + b.succeeded, 0);
  const failed = buckets.reduce((n, b) => n + b.failed, 0);
  return (
    <>
      {stats.error ? <ErrorNotice error={stats.error} /> : null}
      <p className="stat-line">
        <span>
          <strong>{succeeded + failed}</strong> attempts
        </span>
        <span>
          <strong>{succeeded}</strong> succeeded
        </span>
        <span>
          <strong>{failed}</strong> failed
        </span>
        <span>
          <strong>{percent(succeeded + failed ? succeeded / (succeeded + failed) : null)}</strong> success
        </span>
      </p>
      {succeeded + failed ? (
        <AttemptsChart buckets={buckets} now={Date.now()} />
      ) : (
        <Empty title="No attempts in the last hour">
          Events sent to apps with endpoints appear here within seconds.
        </Empty>
      )}
    </>
  );
}
