import type { Endpoint } from "@herald/sdk/types";
import { useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link, navigate } from "../router.tsx";
import { Confirm } from "../ui/Dialog.tsx";
import { useAction } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";
import { paths } from "./data.ts";

/** Edit, disable or enable, and delete (after asking): what a writable session can do to an endpoint. */
export function EndpointActions({ endpoint, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const { base, readOnly } = useAppScope();
  const [confirming, setConfirming] = useState(false);
  const url = `/v3/endpoints/${encodeURIComponent(endpoint.id)}`;
  const toggle = useAction(async () => {
    await api.post<Endpoint>(url, { disabled: !endpoint.disabled });
    onChanged();
  });
  const remove = useAction(async () => {
    await api.del(url);
    setConfirming(false);
    navigate(paths.endpoints(base));
  });
  if (readOnly) return null;
  return (
    <>
      <div className="actions">
        <Link className="button button-secondary" href={paths.editEndpoint(base, endpoint.id)}>
          Edit
        </Link>
        <button
          type="button"
          className="button-secondary"
          disabled={toggle.busy}
          onClick={() => toggle.run()}
        >
          {endpoint.disabled ? "Enable" : "Disable"}
        </button>
        <button type="button" className="button-danger" onClick={() => setConfirming(true)}>
          Delete
        </button>
      </div>
      <ErrorNotice error={toggle.error} />
      <Confirm
        open={confirming}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        busy={remove.busy}
        onConfirm={() => remove.run()}
        onCancel={() => {
          setConfirming(false);
          remove.clearError();
        }}
        message={
          <>
            <p>
              Nothing more will be sent to <span className="mono">{endpoint.url}</span>.
            </p>
            <p>
              <strong>Pending retries are dropped:</strong> deliveries still waiting for another attempt end
              as <em>dropped</em> and are not sent. Past deliveries and attempts stay readable.
            </p>
          </>
        }
      >
        <ErrorNotice error={remove.error} />
      </Confirm>
    </>
  );
}
