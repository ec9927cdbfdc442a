import type { Endpoint, Replay } from "@herald/sdk/types";
import { type FormEvent, useId, useState } from "react";
import { api } from "../api.ts";
import { Field } from "../ui/Field.tsx";
import { useAction } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";
import { ReplayProgress } from "./ReplayProgress.tsx";

type Mode = "all" | "since" | "event";

/** Sends an endpoint's failed deliveries again: all, those failed since a time, or one event's. */
export function ReplayPanel({ endpoint, onReplayed }: { endpoint: Endpoint; onReplayed?: () => void }) {
  const id = useId();
  const [mode, setMode] = useState<Mode>("all");
  const [since, setSince] = useState("");
  const [event, setEvent] = useState("");
  const [replay, setReplay] = useState<Replay | null>(null);
  const start = useAction(async () => {
    const body: Record<string, string> = {};
    if (mode === "since") body.since = since ? new Date(since).toISOString() : "";
    if (mode === "event") body.event = event.trim();
    const made = await api.post<Replay>(`/v3/endpoints/${encodeURIComponent(endpoint.id)}/replay`, body);
    setReplay(made);
    onReplayed?.();
  });
  const param = start.error?.param;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setReplay(null);
    void start.run();
  };
  const modes: [Mode, string][] = [
    ["all", "All failed deliveries"],
    ["since", "Failed since a time"],
    ["event", "One event"],
  ];
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Replay failed deliveries</h2>
      <p className="muted">
        Deliveries that ran out of retries are sent again, oldest first, with the same event id.
      </p>
      <form onSubmit={submit} aria-labelledby={`${id}-title`}>
        <fieldset className="field">
          <legend>Which deliveries</legend>
          <div className="checkbox-row">
            {modes.map(([value, label]) => (
              <label key={value}>
                <input
                  type="radio"
                  name={`${id}-mode`}
                  value={value}
                  checked={mode === value}
                  onChange={() => setMode(value)}
                />
                {label}
              </label>
            ))}
          </div>
        </fieldset>
        {mode === "since" ? (
          <Field
            label="Failed since"
            hint="Your local time. Only deliveries whose last failure was at or after it."
            error={param === "since" ? start.error?.message : null}
          >
            {(props) => (
              <input
                {...props}
                type="datetime-local"
                step={1}
                required
                value={since}
                onChange={(e) => setSince(e.target.value)}
              />
            )}
          </Field>
        ) : null}
        {mode === "event" ? (
          <Field
            label="Event id"
            hint="The event whose failed delivery to this endpoint should be sent again."
            error={param === "event" ? start.error?.message : null}
          >
            {(props) => (
              <input
                {...props}
                required
                spellCheck={false}
                autoComplete="off"
                placeholder="evt_…"
                value={event}
                onChange={(e) => setEvent(e.target.value)}
              />
            )}
          </Field>
        ) : null}
        {start.error && param !== "since" && param !== "event" ? <ErrorNotice error={start.error} /> : null}
        <button
          type="submit"
          disabled={
            start.busy ||
            endpoint.disabled ||
            (mode === "since" && !since) ||
            (mode === "event" && !event.trim())
          }
        >
          {start.busy ? "Queuing…" : "Replay"}
        </button>
        {endpoint.disabled ? <p className="muted">Enable the endpoint to replay its deliveries.</p> : null}
      </form>
      {/* The one live region for the replay's progress: there from the start, so its news is read. */}
      <div aria-live="polite">
        {replay ? (
          <ReplayProgress initial={replay} endpointDisabled={endpoint.disabled} key={replay.id} />
        ) : null}
      </div>
    </section>
  );
}
