import { api } from "../api.ts";
import type { EndpointStats } from "../types.ts";
import { useResource } from "../ui/hooks.ts";
import { Time } from "../ui/Time.tsx";

/** How an endpoint has fared over the last 24 hours, in one line; refreshed every 10 s. */
export function EndpointHealth({ id }: { id: string }) {
  const stats = useResource(
    () => api.get<EndpointStats>(`/v3/endpoints/${encodeURIComponent(id)}/stats`),
    [id],
    10_000,
  );
  const s = stats.data;
  if (!s) return <p className="health muted">{stats.error ? "Health unavailable." : "Loading health…"}</p>;
  const total = s.succeeded + s.failed;
  return (
    <p className="health">
      {s.success_rate === null ? (
        <span className="muted">No attempts in the last 24 h</span>
      ) : (
        <span className={s.success_rate < 0.9 ? "health-bad" : "health-good"}>
          {formatRate(s.success_rate)} succeeded over 24 h ({s.succeeded} of {total})
        </span>
      )}
      <span className="health-sep" aria-hidden="true">
        ·
      </span>
      <span>
        Last attempt <Time value={s.last_attempt_at} fallback="never" />
      </span>
      {s.failing_since ? (
        <>
          <span className="health-sep" aria-hidden="true">
            ·
          </span>
          <span className="health-bad">
            Failing since <Time value={s.failing_since} />
          </span>
        </>
      ) : null}
    </p>
  );
}

export function formatRate(rate: number): string {
  const pct = rate * 100;
  return `${pct === 100 || pct === 0 ? pct.toFixed(0) : pct.toFixed(1)}%`;
}
