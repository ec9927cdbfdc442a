import { useState } from "react";
import { api } from "../api.ts";
import type { Replay } from "../types.ts";
import { useResource } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";

/**
 * A replay from `queued` to done, polled every second. `completed` means every delivery was
 * handed to a sender again; the counts keep moving until each was attempted, so polling stops
 * only then.
 */
export function ReplayProgress({ initial }: { initial: Replay }) {
  const [done, setDone] = useState(initial.status === "completed" && initial.queued === 0);
  const latest = useResource(
    async () => {
      const r = await api.get<Replay>(`/v3/replays/${encodeURIComponent(initial.id)}`);
      if (r.status === "completed" && r.attempted >= r.queued) setDone(true);
      return r;
    },
    [initial.id],
    done ? undefined : 1000,
  );
  const r = latest.data ?? initial;
  if (r.queued === 0)
    return (
      <p className="notice notice-info" role="status">
        Nothing to replay: no failed delivery of this endpoint matches.
      </p>
    );
  return (
    <div className="replay-progress" role="status">
      <p>
        Queued <strong>{r.queued}</strong> {r.queued === 1 ? "delivery" : "deliveries"}{" "}
        <Status value={r.status} />
      </p>
      <progress max={r.queued} value={Math.min(r.attempted, r.queued)} aria-label="Replay progress" />
      <p>
        {r.attempted} of {r.queued} attempted · <span className="health-good">{r.succeeded} succeeded</span> ·{" "}
        <span className={r.failed ? "health-bad" : undefined}>{r.failed} failed</span>
      </p>
      <p className="muted">
        Started <Time value={r.created_at} />
        {r.completed_at ? (
          <>
            {" "}
            · all handed to senders <Time value={r.completed_at} />
          </>
        ) : null}
      </p>
      <ErrorNotice error={latest.error} />
    </div>
  );
}
