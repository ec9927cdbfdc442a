import type { App, PortalSession } from "@herald/sdk/types";
import { type FormEvent, useState } from "react";
import { api } from "../api.ts";
import { Confirm, Dialog } from "../ui/Dialog.tsx";
import { Field } from "../ui/Field.tsx";
import { useAction } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";
import { Time } from "../ui/Time.tsx";

const VALIDITY = [
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 604_800, label: "7 days" },
];

/** Make a portal link to send this app's customer, or end every session its links opened. */
export function PortalLinks({ app }: { app: App }) {
  const [making, setMaking] = useState(false);
  const [revoking, setRevoking] = useState(false);
  const [revoked, setRevoked] = useState<string | null>(null);
  const revoke = useAction(async () => {
    const res = await api.del<{ revoked: number }>(`/v3/apps/${encodeURIComponent(app.id)}/portal-sessions`);
    setRevoking(false);
    setRevoked(
      res.revoked === 1 ? "1 portal session was revoked." : `${res.revoked} portal sessions were revoked.`,
    );
  });
  return (
    <div className="actions">
      <p className="muted small" role="status">
        {revoked}
      </p>
      <button type="button" onClick={() => setMaking(true)}>
        Portal link…
      </button>
      <button type="button" className="button-secondary" onClick={() => setRevoking(true)}>
        Revoke portal links
      </button>
      <Dialog open={making} title={`Portal link for ${app.name}`} onClose={() => setMaking(false)}>
        <MakeLink app={app} onDone={() => setMaking(false)} />
      </Dialog>
      <Confirm
        open={revoking}
        title="Revoke every portal link?"
        message={`Everyone using a portal link of ${app.name} is signed out now, and links not yet opened stop working.`}
        confirmLabel="Revoke all"
        busy={revoke.busy}
        onConfirm={() => void revoke.run()}
        onCancel={() => setRevoking(false)}
      >
        <ErrorNotice error={revoke.error} />
      </Confirm>
    </div>
  );
}

function MakeLink({ app, onDone }: { app: App; onDone: () => void }) {
  const [seconds, setSeconds] = useState(3600);
  const [readOnly, setReadOnly] = useState(false);
  const [made, setMade] = useState<PortalSession | null>(null);
  const [copied, setCopied] = useState(false);
  const make = useAction(async () => {
    setMade(
      await api.post<PortalSession>(`/v3/apps/${encodeURIComponent(app.id)}/portal-sessions`, {
        expires_in: seconds,
        read_only: readOnly,
      }),
    );
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void make.run();
  };
  const copy = async () => {
    if (!made) return;
    try {
      await navigator.clipboard.writeText(made.url);
      setCopied(true);
    } catch {
      // Without clipboard access the link stays selected in its box, to copy by hand.
      setCopied(false);
    }
  };
  if (made)
    return (
      <>
        <Field
          label="Portal link"
          hint={
            <>
              Opens once, valid until <Time value={made.expires_at} />
              {made.read_only ? ", read-only" : ""}. Send it to the customer privately.
            </>
          }
        >
          {(props) => (
            <input {...props} readOnly value={made.url} className="mono" onFocus={(e) => e.target.select()} />
          )}
        </Field>
        <p className="muted small" role="status">
          {copied ? "Copied to the clipboard." : ""}
        </p>
        <div className="actions">
          <button type="button" className="button-secondary" onClick={onDone}>
            Close
          </button>
          <button type="button" onClick={copy}>
            Copy link
          </button>
        </div>
      </>
    );
  return (
    <form onSubmit={submit}>
      <ErrorNotice error={make.error} />
      <Field label="Valid for">
        {(props) => (
          <select {...props} value={seconds} onChange={(e) => setSeconds(Number(e.target.value))}>
            {VALIDITY.map((v) => (
              <option key={v.seconds} value={v.seconds}>
                {v.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <label className="checkbox-row">
        <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} />
        Read-only (the customer can look but change nothing)
      </label>
      <div className="actions">
        <button type="button" className="button-secondary" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" disabled={make.busy}>
          {make.busy ? "Creating…" : "Create link"}
        </button>
      </div>
    </form>
  );
}
