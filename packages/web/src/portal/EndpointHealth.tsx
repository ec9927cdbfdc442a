import type { EndpointStats } from "@herald/sdk/types";
import { api } from "../api.ts";
import { percent } from "../ui/format.ts";
import { useResource } from "../ui/hooks.ts";
import { POLL_MS } from "../ui/poll.ts";
import { Time } from "../ui/Time.tsx";

/** The counts a health line shows: those of `EndpointStats` and of each `/v3/stats/endpoints` item. */
export type HealthCounts = Pick<
  EndpointStats,
  "succeeded" | "failed" | "success_rate" | "last_attempt_at" | "failing_since"
>;

/** One endpoint's health over the last 24 hours, loaded on its own and kept fresh. */
export function EndpointHealth({ id }: { id: string }) {
  const stats = useResource(
    () => api.get<EndpointStats>(`/v3/endpoints/${encodeURIComponent(id)}/stats`),
    [id],
    POLL_MS.health,
  );
  return <HealthLine stats={stats.data} unavailable={Boolean(stats.error)} />;
}

/** How an endpoint has fared over the last 24 hours, in one line. */
export function HealthLine({
  stats: s,
  unavailable,
}: {
  stats: HealthCounts | undefined;
  unavailable?: boolean;
}) {
  if (!s) return <p className="health muted">{unavailable ? "Health unavailable." : "Loading health…"}</p>;
  const total = s.succeeded + s.failed;
  return (
    <p className="health">
      {s.success_rate === null ? (
        <span className="muted">No attempts in the last 24 h</span>
      ) : (
        <span className={s.success_rate < 0.9 ? "health-bad" : "health-good"}>
          {percent(s.success_rate)} succeeded over 24 h ({s.succeeded} of {total})
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
