import type { EndpointSecret } from "@herald/sdk/types";
import { useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Confirm } from "../ui/Dialog.tsx";
import { useAction } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";
import { Time } from "../ui/Time.tsx";

/** The endpoint's signing secret: hidden until asked for, and rotated after a confirmation. */
export function SecretPanel({ endpointId }: { endpointId: string }) {
  const { readOnly } = useAppScope();
  // A read-only link cannot see the secret (the API refuses it): nothing to show.
  if (readOnly) return null;
  return <SecretCard endpointId={endpointId} />;
}

function SecretCard({ endpointId }: { endpointId: string }) {
  const [secret, setSecret] = useState<EndpointSecret | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [rotated, setRotated] = useState(false);
  const url = `/v3/endpoints/${encodeURIComponent(endpointId)}/secret`;
  const reveal = useAction(async () => setSecret(await api.get<EndpointSecret>(url)));
  const rotate = useAction(async () => {
    setSecret(await api.post<EndpointSecret>(`${url}/rotate`));
    setRotated(true);
    setConfirming(false);
  });
  return (
    <section className="card" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p className="muted">
        Every request carries a <code>webhook-signature</code> made with this secret; check it to know the
        request came from us.
      </p>
      {/* Says what happened, never the secret itself (it would be read aloud). */}
      <p className="visually-hidden" aria-live="polite">
        {secret ? (rotated ? "A new secret was made and is shown." : "Secret shown.") : ""}
      </p>
      <div>
        {secret ? (
          <>
            {rotated ? (
              <p className="notice notice-ok">A new secret was made. Update your receiver.</p>
            ) : null}
            <dl className="props">
              <dt>Current secret</dt>
              <dd>
                <code className="mono secret-value">{secret.secret}</code>
              </dd>
            </dl>
            {secret.previous_secret_expires_at ? (
              <p className="muted">
                The previous secret keeps signing beside this one until{" "}
                <Time value={secret.previous_secret_expires_at} />.
              </p>
            ) : null}
          </>
        ) : null}
      </div>
      <ErrorNotice error={reveal.error} />
      <div className="actions">
        {secret ? (
          <button
            type="button"
            className="button-secondary"
            onClick={() => {
              setSecret(null);
              setRotated(false);
            }}
          >
            Hide secret
          </button>
        ) : (
          <button
            type="button"
            className="button-secondary"
            disabled={reveal.busy}
            onClick={() => reveal.run()}
          >
            {reveal.busy ? "Revealing…" : "Reveal secret"}
          </button>
        )}
        <button type="button" className="button-secondary" onClick={() => setConfirming(true)}>
          Rotate secret
        </button>
      </div>
      <Confirm
        open={confirming}
        title="Rotate the signing secret?"
        confirmLabel="Rotate secret"
        busy={rotate.busy}
        onConfirm={() => rotate.run()}
        onCancel={() => {
          setConfirming(false);
          rotate.clearError();
        }}
        message={
          <p>
            A new secret starts signing now. The old one keeps signing beside it for <strong>24 hours</strong>{" "}
            (requests carry both signatures), so you have a day to update your receiver without missing a
            delivery.
          </p>
        }
      >
        <ErrorNotice error={rotate.error} />
      </Confirm>
    </section>
  );
}
