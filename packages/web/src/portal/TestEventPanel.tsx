import type { Endpoint, Event as HeraldEvent } from "@herald/sdk/types";
import { type FormEvent, useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import { Field } from "../ui/Field.tsx";
import { useAction, useResource } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { useEventTypes } from "../ui/useEventTypes.ts";
import { paths } from "./data.ts";

/** Sends the example payload of a type to this endpoint only, then follows its delivery. */
export function TestEventPanel({ endpoint }: { endpoint: Endpoint }) {
  const { base } = useAppScope();
  const catalog = useEventTypes();
  const choices = endpoint.event_types.length
    ? endpoint.event_types
    : (catalog.data?.map((t) => t.name) ?? []);
  const [type, setType] = useState("");
  const [sent, setSent] = useState<HeraldEvent | null>(null);
  const send = useAction(async () => {
    setSent(null);
    const chosen = type || choices[0];
    setSent(
      await api.post<HeraldEvent>(
        `/v3/endpoints/${encodeURIComponent(endpoint.id)}/test`,
        chosen ? { type: chosen } : {},
      ),
    );
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void send.run();
  };
  return (
    <section className="card" aria-labelledby="test-title">
      <h2 id="test-title">Send a test event</h2>
      <p className="muted">
        Sends the type's example payload to this endpoint only. It is a real event: it is signed, retried and
        logged like any other.
      </p>
      <form className="inline-form" onSubmit={submit}>
        {choices.length > 1 ? (
          <Field label="Event type">
            {(props) => (
              <select {...props} value={type || choices[0]} onChange={(e) => setType(e.target.value)}>
                {choices.map((name) => (
                  <option key={name}>{name}</option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <button type="submit" disabled={send.busy || endpoint.disabled}>
          {send.busy ? "Sending…" : "Send test event"}
        </button>
      </form>
      {endpoint.disabled ? <p className="muted">Enable the endpoint to send it a test event.</p> : null}
      <ErrorNotice error={send.error} />
      <div aria-live="polite">
        {sent ? <SentEvent event={sent} endpointId={endpoint.id} href={paths.event(base, sent.id)} /> : null}
      </div>
    </section>
  );
}

/**
 * The test event made, with its delivery's status while its first attempt is under way. Once
 * it is no longer pending the panel stops asking: a retry is hours away on a real schedule,
 * so it says when, and the event's page follows the rest.
 */
function SentEvent({ event, endpointId, href }: { event: HeraldEvent; endpointId: string; href: string }) {
  const [answered, setAnswered] = useState(false);
  const latest = useResource(
    async () => {
      const e = await api.get<HeraldEvent>(`/v3/events/${encodeURIComponent(event.id)}`);
      const d = e.deliveries.find((x) => x.endpoint === endpointId);
      if (d && d.status !== "pending") setAnswered(true);
      return e;
    },
    [event.id],
    answered ? undefined : 1000,
  );
  const delivery = (latest.data ?? event).deliveries.find((d) => d.endpoint === endpointId);
  return (
    <p className="notice notice-info test-result">
      Sent <span className="mono">{event.type}</span> as event{" "}
      <Link href={href} className="mono">
        {event.id}
      </Link>
      . Delivery: <Status value={delivery?.status ?? "pending"} />
      {delivery?.next_attempt_at ? (
        <>
          {" "}
          Next attempt <Time value={delivery.next_attempt_at} />.
        </>
      ) : null}
    </p>
  );
}
