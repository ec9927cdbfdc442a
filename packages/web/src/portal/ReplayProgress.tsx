import type { Replay } from "@herald/sdk/types";
import { useRef, useState } from "react";
import { api } from "../api.ts";
import { useResource } from "../ui/hooks.ts";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";

/** Polls after the replay is `completed` with nothing moving, before it stops asking. */
const STILL_POLLS = 5;

/**
 * A replay from `queued` to done, polled every second. `completed` means every delivery was
 * handed to a sender again; the counts keep moving until each was attempted. Polling stops
 * when all were attempted, when the endpoint is disabled, or when a completed replay's
 * counts stop moving (a delivery dropped, or retrying on a long schedule): then a button
 * asks again. It sits in the panel's live region, so it has none of its own.
 */
export function ReplayProgress({
  initial,
  endpointDisabled,
}: {
  initial: Replay;
  endpointDisabled: boolean;
}) {
  const [done, setDone] = useState(initial.status === "completed" && initial.queued === 0);
  const [stalled, setStalled] = useState(false);
  const still = useRef({ counts: "", polls: 0 });
  const latest = useResource(
    async () => {
      const r = await api.get<Replay>(`/v3/replays/${encodeURIComponent(initial.id)}`);
      if (r.status === "completed" && r.attempted >= r.queued) setDone(true);
      const counts = `${r.status} ${r.attempted} ${r.succeeded} ${r.failed}`;
      still.current =
        counts === still.current.counts ? { counts, polls: still.current.polls + 1 } : { counts, polls: 0 };
      if (r.status === "completed" && still.current.polls >= STILL_POLLS) setStalled(true);
      return r;
    },
    [initial.id],
    done || stalled || endpointDisabled ? undefined : 1000,
  );
  const r = latest.data ?? initial;
  if (r.queued === 0)
    return (
      <p className="notice notice-info">Nothing to replay: no failed delivery of this endpoint matches.</p>
    );
  const waiting = r.queued - Math.min(r.attempted, r.queued);
  const resume = () => {
    still.current = { counts: "", polls: 0 };
    setStalled(false);
    latest.reload();
  };
  return (
    <div className="replay-progress">
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
      {!done && (stalled || endpointDisabled) ? (
        <p>
          {endpointDisabled
            ? "The endpoint is disabled: the rest waits until it is enabled. "
            : `${waiting} ${waiting === 1 ? "delivery is" : "deliveries are"} not attempted yet (retrying on their schedule, or dropped). `}
          <button type="button" className="button-link" onClick={resume}>
            Check again
          </button>
        </p>
      ) : null}
      {latest.error ? (
        <p className="field-error">Could not refresh the progress: {latest.error.message}</p>
      ) : null}
    </div>
  );
}
