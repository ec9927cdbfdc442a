import type { ReactNode } from "react";
import type { ApiError } from "../api.ts";

/** An API error as the user should read it: the message, and which field it is about. */
export function ErrorNotice({ error, onRetry }: { error: ApiError | null; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div className="notice notice-error" role="alert">
      <p>
        {error.message}
        {error.param ? <span className="muted"> (field: {error.param})</span> : null}
      </p>
      {error.body.details?.length ? (
        <ul>
          {error.body.details.map((d) => (
            <li key={`${d.path}:${d.message}`}>
              <code>{d.path}</code> {d.message}
            </li>
          ))}
        </ul>
      ) : null}
      {onRetry ? (
        <button type="button" className="button-secondary" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children ? <div className="muted">{children}</div> : null}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {label}
    </p>
  );
}
